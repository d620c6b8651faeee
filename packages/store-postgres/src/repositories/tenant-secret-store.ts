import type { PutTenantSecret, TenantSecretRow, TenantSecretStore, TenantSecretSummary } from '@veetbot/ports';
import { and, asc, eq, ne, sql } from 'drizzle-orm';
import type { Database } from '../database';
import { tenantSecrets } from '../schema';

const summary = { name: tenantSecrets.name, createdAt: tenantSecrets.createdAt, rotatedAt: tenantSecrets.rotatedAt };

/**
 * A tenant's sealed secrets (ADR 0017). Every operation is a tenant transaction under
 * row-level security: another tenant's names do not exist here. The store never sees a value.
 */
export class PostgresTenantSecretStore implements TenantSecretStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  put(tenantId: string, secret: PutTenantSecret): Promise<{ created: boolean; secret: TenantSecretSummary }> {
    return this.#db.tenant(tenantId, async (tx) => {
      // One statement: a concurrent PUT of the same name is an update, never a duplicate-key error.
      // xmax = 0 only for a row this statement inserted.
      const [row] = await tx
        .insert(tenantSecrets)
        .values({ tenantId, name: secret.name, ciphertext: secret.ciphertext, keyId: secret.keyId, createdAt: secret.at, rotatedAt: null })
        .onConflictDoUpdate({
          target: [tenantSecrets.tenantId, tenantSecrets.name],
          set: { ciphertext: secret.ciphertext, keyId: secret.keyId, rotatedAt: secret.at },
        })
        .returning({ ...summary, inserted: sql<boolean>`(xmax = 0)` });
      if (!row) throw new Error('tenant_secrets upsert returned no row');
      const { inserted, ...rest } = row;
      return { created: inserted === true, secret: rest };
    });
  }

  get(tenantId: string, name: string): Promise<TenantSecretRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx.select().from(tenantSecrets).where(eq(tenantSecrets.name, name));
      return row ?? null;
    });
  }

  has(tenantId: string, name: string): Promise<boolean> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx.select({ name: tenantSecrets.name }).from(tenantSecrets).where(eq(tenantSecrets.name, name));
      return row !== undefined;
    });
  }

  list(tenantId: string): Promise<TenantSecretSummary[]> {
    return this.#db.tenant(tenantId, (tx) => tx.select(summary).from(tenantSecrets).orderBy(asc(tenantSecrets.name)));
  }

  delete(tenantId: string, name: string): Promise<boolean> {
    return this.#db.tenant(tenantId, async (tx) => {
      const deleted = await tx.delete(tenantSecrets).where(eq(tenantSecrets.name, name)).returning({ name: tenantSecrets.name });
      return deleted.length > 0;
    });
  }

  listNotSealedWith(keyId: string): Promise<{ tenantId: string; name: string; keyId: string }[]> {
    return this.#db.transaction({ role: 'maintenance' }, (tx) =>
      tx
        .select({ tenantId: tenantSecrets.tenantId, name: tenantSecrets.name, keyId: tenantSecrets.keyId })
        .from(tenantSecrets)
        .where(ne(tenantSecrets.keyId, keyId))
        .orderBy(asc(tenantSecrets.tenantId), asc(tenantSecrets.name)),
    );
  }

  reseal(tenantId: string, name: string, fromKeyId: string, sealed: { ciphertext: Uint8Array; keyId: string }): Promise<boolean> {
    return this.#db.tenant(tenantId, async (tx) => {
      const updated = await tx
        .update(tenantSecrets)
        .set({ ciphertext: sealed.ciphertext, keyId: sealed.keyId })
        .where(and(eq(tenantSecrets.name, name), eq(tenantSecrets.keyId, fromKeyId)))
        .returning({ name: tenantSecrets.name });
      return updated.length > 0;
    });
  }
}
