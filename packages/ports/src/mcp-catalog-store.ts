import type { NewEvent } from './event-store';

// The MCP catalog history (§ Schema additions).
// The conventions every store follows are in stores.ts.

export interface McpCatalogRow {
  readonly id: string;
  readonly tenantId: string;
  readonly serverId: string;
  readonly catalogHash: string;
  readonly remoteName: string;
  readonly registryName: string;
  readonly inputSchema: Record<string, unknown>;
  readonly discoveredAt: Date;
  readonly withdrawnAt: Date | null;
}

export interface McpCatalogGeneration {
  readonly serverId: string;
  /** sha256 over the sorted tool declarations. */
  readonly catalogHash: string;
  readonly discoveredAt: Date;
  readonly tools: readonly {
    readonly remoteName: string;
    readonly registryName: string;
    readonly inputSchema: Record<string, unknown>;
  }[];
}

/** § Schema additions: a history, not a cache. Rows are never updated except withdrawn_at. */
export interface McpCatalogStore {
  /**
   * Write a discovery. A generation already recorded is returned as stored (no new rows). Names
   * present in earlier generations but absent here get withdrawn_at = discoveredAt.
   */
  recordGeneration(tenantId: string, generation: McpCatalogGeneration): Promise<McpCatalogRow[]>;
  /**
   * ADR-0131: one preparation's catalog generations (each as recordGeneration writes it) and its
   * events (as EventStore.append writes them) in ONE tenant transaction, so a failure commits
   * none of them.
   */
  recordPreparation(tenantId: string, generations: readonly McpCatalogGeneration[], events: readonly NewEvent[]): Promise<void>;
  getGeneration(tenantId: string, serverId: string, catalogHash: string): Promise<McpCatalogRow[]>;
  /** The most recently discovered generation of a server, or []. */
  latest(tenantId: string, serverId: string): Promise<McpCatalogRow[]>;
}
