import type { McpServerAdminStore, McpServerPatch, McpServerRow } from '@veetbot/ports';
import { eq } from 'drizzle-orm';
import type { Database } from '../database';
import { mcpServers } from '../schema';
import { notFound } from './not-found';

/** PATCH of a tenant MCP server row; the caller validated the merged configuration as a whole. */
export class PostgresMcpServerAdminStore implements McpServerAdminStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  update(tenantId: string, serverId: string, patch: McpServerPatch): Promise<McpServerRow> {
    const values: Partial<typeof mcpServers.$inferInsert> = {};
    for (const [key, value] of Object.entries(patch) as [keyof McpServerPatch, unknown][]) {
      if (value === undefined) continue;
      (values as Record<string, unknown>)[key] = Array.isArray(value) ? [...(value as unknown[])] : value;
    }
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] =
        Object.keys(values).length === 0
          ? await tx.select().from(mcpServers).where(eq(mcpServers.serverId, serverId))
          : await tx.update(mcpServers).set(values).where(eq(mcpServers.serverId, serverId)).returning();
      if (!row) throw notFound('The MCP server');
      return row;
    });
  }
}
