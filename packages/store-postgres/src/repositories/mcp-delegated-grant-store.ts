import type { McpDelegatedGrantRow, McpDelegatedGrantStore, McpDelegatedGrantSummary, PutMcpDelegatedGrant } from '@veetbot/ports';
import { and, asc, eq, ne } from 'drizzle-orm';
import type { Database } from '../database';
import { mcpDelegatedGrants as grants } from '../schema';

const summary = {
  serverId: grants.serverId,
  issuer: grants.issuer,
  expiresAt: grants.expiresAt,
  createdAt: grants.createdAt,
  updatedAt: grants.updatedAt,
};

/**
 * docs/adr/0080: per-principal delegated MCP grants, sealed before they get here. Every
 * operation is a tenant transaction under row-level security, and every query names the
 * principal: one person's grant is never another's, even inside one tenant.
 */
export class PostgresMcpDelegatedGrantStore implements McpDelegatedGrantStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  put(tenantId: string, grant: PutMcpDelegatedGrant): Promise<void> {
    return this.#db.tenant(tenantId, async (tx) => {
      // One statement: a concurrent save of the same grant is an update, never a duplicate-key error.
      await tx
        .insert(grants)
        .values({
          tenantId,
          principalId: grant.principalId,
          serverId: grant.serverId,
          ciphertext: grant.ciphertext,
          keyId: grant.keyId,
          issuer: grant.issuer,
          expiresAt: grant.expiresAt,
          createdAt: grant.at,
          updatedAt: grant.at,
        })
        .onConflictDoUpdate({
          target: [grants.tenantId, grants.principalId, grants.serverId],
          set: { ciphertext: grant.ciphertext, keyId: grant.keyId, issuer: grant.issuer, expiresAt: grant.expiresAt, updatedAt: grant.at },
        });
    });
  }

  get(tenantId: string, principalId: string, serverId: string): Promise<McpDelegatedGrantRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx
        .select()
        .from(grants)
        .where(and(eq(grants.principalId, principalId), eq(grants.serverId, serverId)));
      return row ?? null;
    });
  }

  list(tenantId: string, principalId: string): Promise<McpDelegatedGrantSummary[]> {
    return this.#db.tenant(tenantId, (tx) =>
      tx.select(summary).from(grants).where(eq(grants.principalId, principalId)).orderBy(asc(grants.serverId)),
    );
  }

  delete(tenantId: string, principalId: string, serverId: string): Promise<boolean> {
    return this.#db.tenant(tenantId, async (tx) => {
      const deleted = await tx
        .delete(grants)
        .where(and(eq(grants.principalId, principalId), eq(grants.serverId, serverId)))
        .returning({ serverId: grants.serverId });
      return deleted.length > 0;
    });
  }

  listNotSealedWith(keyId: string): Promise<{ tenantId: string; principalId: string; serverId: string; keyId: string }[]> {
    return this.#db.transaction({ role: 'maintenance' }, (tx) =>
      tx
        .select({ tenantId: grants.tenantId, principalId: grants.principalId, serverId: grants.serverId, keyId: grants.keyId })
        .from(grants)
        .where(ne(grants.keyId, keyId))
        .orderBy(asc(grants.tenantId), asc(grants.principalId), asc(grants.serverId)),
    );
  }

  reseal(
    tenantId: string,
    principalId: string,
    serverId: string,
    fromKeyId: string,
    sealed: { ciphertext: Uint8Array; keyId: string },
  ): Promise<boolean> {
    return this.#db.tenant(tenantId, async (tx) => {
      const updated = await tx
        .update(grants)
        .set({ ciphertext: sealed.ciphertext, keyId: sealed.keyId })
        .where(and(eq(grants.principalId, principalId), eq(grants.serverId, serverId), eq(grants.keyId, fromKeyId)))
        .returning({ serverId: grants.serverId });
      return updated.length > 0;
    });
  }
}
