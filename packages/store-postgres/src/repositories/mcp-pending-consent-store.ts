import type { McpPendingConsentLink, McpPendingConsentRow, McpPendingConsentStore, NewMcpPendingConsent } from '@veetbot/ports';
import { and, asc, eq, isNull } from 'drizzle-orm';
import type { Database } from '../database';
import { mcpPendingConsents as consents } from '../schema';

const link = {
  id: consents.id,
  invocationId: consents.invocationId,
  serverId: consents.serverId,
  principalId: consents.principalId,
  authorizationUrl: consents.authorizationUrl,
  expiresAt: consents.expiresAt,
};

/**
 * docs/adr/0082: the pending consents of calls suspended for a person's consent. Every
 * operation but the callback's lookup is a tenant transaction under row-level security; the
 * lookup reads only (id, tenant_id) by the state's hash, as the maintenance role.
 */
export class PostgresMcpPendingConsentStore implements McpPendingConsentStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  insert(tenantId: string, consent: NewMcpPendingConsent): Promise<void> {
    return this.#db.tenant(tenantId, async (tx) => {
      await tx.insert(consents).values({ ...consent, tenantId, usedAt: null });
    });
  }

  get(tenantId: string, id: string): Promise<McpPendingConsentRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx.select().from(consents).where(eq(consents.id, id));
      return row ?? null;
    });
  }

  findByStateHash(stateHash: Uint8Array): Promise<{ tenantId: string; id: string } | null> {
    return this.#db.transaction({ role: 'maintenance' }, async (tx) => {
      const [row] = await tx
        .select({ tenantId: consents.tenantId, id: consents.id })
        .from(consents)
        .where(eq(consents.stateHash, stateHash));
      return row ?? null;
    });
  }

  markUsed(tenantId: string, id: string, at: Date): Promise<boolean> {
    return this.#db.tenant(tenantId, async (tx) => {
      // One conditional statement: of two racing callbacks exactly one sees a row come back.
      const updated = await tx
        .update(consents)
        .set({ usedAt: at })
        .where(and(eq(consents.id, id), isNull(consents.usedAt)))
        .returning({ id: consents.id });
      return updated.length > 0;
    });
  }

  listOpenForRun(tenantId: string, runId: string): Promise<McpPendingConsentLink[]> {
    return this.#db.tenant(tenantId, (tx) =>
      tx
        .select(link)
        .from(consents)
        .where(and(eq(consents.runId, runId), isNull(consents.usedAt)))
        .orderBy(asc(consents.createdAt), asc(consents.id)),
    );
  }
}
