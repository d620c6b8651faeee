import type {
  McpCatalogGeneration,
  McpCatalogRow,
  McpCatalogStore,
  McpServerRow,
  McpServerStore,
  NewEvent,
  NewMcpServer,
} from '@veetbot/ports';
import { and, asc, desc, eq, isNull, ne, notInArray } from 'drizzle-orm';
import type { Database, Tx } from '../database';
import { mcpServers, mcpToolCatalog } from '../schema';
import { appendEventsInTx } from './event-writer';
import { notFound } from './not-found';

export class PostgresMcpServerStore implements McpServerStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  create(tenantId: string, server: NewMcpServer): Promise<McpServerRow> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx
        .insert(mcpServers)
        .values({
          ...server,
          tenantId,
          tokenScopes: server.tokenScopes === null ? null : [...server.tokenScopes],
          requiredScopes: [...server.requiredScopes],
        })
        .returning();
      if (!row) throw notFound('The MCP server');
      return row;
    });
  }

  get(tenantId: string, serverId: string): Promise<McpServerRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx.select().from(mcpServers).where(eq(mcpServers.serverId, serverId));
      return row ?? null;
    });
  }

  list(tenantId: string): Promise<McpServerRow[]> {
    return this.#db.tenant(tenantId, (tx) => tx.select().from(mcpServers).orderBy(asc(mcpServers.serverId)));
  }

  setEnabled(tenantId: string, serverId: string, enabled: boolean): Promise<McpServerRow> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx.update(mcpServers).set({ enabled }).where(eq(mcpServers.serverId, serverId)).returning();
      if (!row) throw notFound('The MCP server');
      return row;
    });
  }
}

export class PostgresMcpCatalogStore implements McpCatalogStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  /** § Schema additions: a new generation is new rows; the old ones only get withdrawn_at. */
  recordGeneration(tenantId: string, generation: McpCatalogGeneration): Promise<McpCatalogRow[]> {
    return this.#db.tenant(tenantId, (tx) => writeGeneration(tx, tenantId, generation));
  }

  /**
   * ADR-0131: "One preparation writes its catalog generations and events in a single
   * transaction, so a failure commits none of them." The events are appended in the same
   * transaction, after the generations; a refused event rolls the generations back.
   */
  recordPreparation(tenantId: string, generations: readonly McpCatalogGeneration[], events: readonly NewEvent[]): Promise<void> {
    return this.#db.tenant(tenantId, async (tx) => {
      for (const generation of generations) await writeGeneration(tx, tenantId, generation);
      await appendEventsInTx(tx, tenantId, events);
    });
  }

  getGeneration(tenantId: string, serverId: string, catalogHash: string): Promise<McpCatalogRow[]> {
    return this.#db.tenant(tenantId, (tx) => selectGeneration(tx, serverId, catalogHash));
  }

  latest(tenantId: string, serverId: string): Promise<McpCatalogRow[]> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [newest] = await tx
        .select({ catalogHash: mcpToolCatalog.catalogHash })
        .from(mcpToolCatalog)
        .where(eq(mcpToolCatalog.serverId, serverId))
        .orderBy(desc(mcpToolCatalog.discoveredAt))
        .limit(1);
      return newest ? selectGeneration(tx, serverId, newest.catalogHash) : [];
    });
  }
}

/** A generation already stored writes nothing; names absent from a new one get withdrawn_at. */
async function writeGeneration(tx: Tx, tenantId: string, generation: McpCatalogGeneration): Promise<McpCatalogRow[]> {
  const known = await selectGeneration(tx, generation.serverId, generation.catalogHash);
  if (known.length > 0) return known;
  if (generation.tools.length > 0) {
    await tx
      .insert(mcpToolCatalog)
      .values(
        generation.tools.map((tool) => ({
          tenantId,
          serverId: generation.serverId,
          catalogHash: generation.catalogHash,
          remoteName: tool.remoteName,
          registryName: tool.registryName,
          inputSchema: tool.inputSchema,
          discoveredAt: generation.discoveredAt,
        })),
      )
      .onConflictDoNothing();
  }
  const present = generation.tools.map((tool) => tool.remoteName);
  await tx
    .update(mcpToolCatalog)
    .set({ withdrawnAt: generation.discoveredAt })
    .where(
      and(
        eq(mcpToolCatalog.serverId, generation.serverId),
        ne(mcpToolCatalog.catalogHash, generation.catalogHash),
        isNull(mcpToolCatalog.withdrawnAt),
        ...(present.length > 0 ? [notInArray(mcpToolCatalog.remoteName, present)] : []),
      ),
    );
  return selectGeneration(tx, generation.serverId, generation.catalogHash);
}

function selectGeneration(tx: Tx, serverId: string, catalogHash: string): Promise<McpCatalogRow[]> {
  return tx
    .select()
    .from(mcpToolCatalog)
    .where(and(eq(mcpToolCatalog.serverId, serverId), eq(mcpToolCatalog.catalogHash, catalogHash)))
    .orderBy(asc(mcpToolCatalog.remoteName));
}
