import type { ApiKeyRow, ApiKeyStore, NewApiKey, TenantRow, TenantStore } from '@veetbot/ports';
import { and, eq, isNull } from 'drizzle-orm';
import type { Database } from '../database';
import { apiKeys, tenants } from '../schema';
import { apiKeyFromJson, hot, parsed } from './hot-path';
import { notFound } from './not-found';

/**
 * Tenants are the platform's: created by the connecting (owner) role, which the tenants table
 * does not FORCE row-level security on. A tenant transaction reads its own row only.
 */
export class PostgresTenantStore implements TenantStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  create(tenant: TenantRow): Promise<TenantRow> {
    return this.#db.transaction({ role: 'owner' }, async (tx) => {
      await tx.insert(tenants).values(tenant).onConflictDoNothing();
      const [row] = await tx.select().from(tenants).where(eq(tenants.id, tenant.id));
      if (!row) throw notFound('The tenant');
      return row;
    });
  }

  get(tenantId: string): Promise<TenantRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx.select().from(tenants).where(eq(tenants.id, tenantId));
      return row ?? null;
    });
  }
}

export class PostgresApiKeyStore implements ApiKeyStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  create(tenantId: string, key: NewApiKey): Promise<ApiKeyRow> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx
        .insert(apiKeys)
        .values({ ...key, tenantId, scopes: [...key.scopes] })
        .returning();
      if (!row) throw notFound('The API key');
      return row;
    });
  }

  /** Before authentication the tenant is unknown: the maintenance role reads across tenants. */
  async findByHash(keyHash: string): Promise<ApiKeyRow | null> {
    // Every request authenticates: one statement as veetbot_maintenance (sql/functions/veetbot_find_api_key.sql).
    const [result] = await this.#db.statement(hot('veetbot_find_api_key', [keyHash]));
    const found = parsed(result?.result);
    return found === null || found === undefined ? null : apiKeyFromJson(found);
  }

  revoke(tenantId: string, keyId: string, at: Date): Promise<ApiKeyRow> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [revoked] = await tx
        .update(apiKeys)
        .set({ revokedAt: at })
        .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)))
        .returning();
      if (revoked) return revoked;
      const [existing] = await tx.select().from(apiKeys).where(eq(apiKeys.id, keyId));
      if (!existing) throw notFound('The API key');
      return existing;
    });
  }
}
