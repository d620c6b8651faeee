import type { McpCatalogHistoryStore, McpCatalogRow } from '@veetbot/ports';
import { and, asc, eq } from 'drizzle-orm';
import type { Database } from '../database';
import { mcpToolCatalog } from '../schema';

/** A server's whole catalog history for the api (the operator console's generations and their diff). */
export class PostgresMcpCatalogHistoryStore implements McpCatalogHistoryStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  history(tenantId: string, serverId: string, limit: number): Promise<McpCatalogRow[]> {
    return this.#db.tenant(tenantId, (tx) =>
      tx
        .select()
        .from(mcpToolCatalog)
        .where(and(eq(mcpToolCatalog.tenantId, tenantId), eq(mcpToolCatalog.serverId, serverId)))
        .orderBy(asc(mcpToolCatalog.discoveredAt), asc(mcpToolCatalog.registryName))
        .limit(limit),
    );
  }
}
