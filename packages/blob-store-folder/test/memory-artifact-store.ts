import { StoreError } from '@veetbot/domain';
import type { ArtifactRow, ArtifactStore, NewArtifact } from '@veetbot/ports';

/**
 * A small in-memory ports.ArtifactStore: rows keyed by (tenant, id), each tenant seeing only
 * its own, as RLS makes the real one do. It runs the port's contract
 * (memory-artifact-store.contract.test.ts, docs/adr/0030). `failNextInsert` simulates a
 * metadata insert failing after the blob was written.
 */
export class MemoryArtifactStore implements ArtifactStore {
  readonly rows = new Map<string, ArtifactRow>();
  failNextInsert: Error | null = null;

  async insert(tenantId: string, artifact: NewArtifact): Promise<ArtifactRow> {
    if (this.failNextInsert !== null) {
      const error = this.failNextInsert;
      this.failNextInsert = null;
      throw error;
    }
    const key = `${tenantId}\u0000${artifact.id}`;
    if (this.rows.has(key)) throw new StoreError('store.unique_violation', 'A unique constraint refused the write.');
    const row: ArtifactRow = { ...artifact, tenantId };
    this.rows.set(key, row);
    return row;
  }

  async get(tenantId: string, artifactId: string): Promise<ArtifactRow | null> {
    return this.rows.get(`${tenantId}\u0000${artifactId}`) ?? null;
  }

  /** Oldest first, then by id: the real store's order. */
  async listForRun(tenantId: string, runId: string): Promise<ArtifactRow[]> {
    return [...this.rows.values()]
      .filter((row) => row.tenantId === tenantId && row.runId === runId)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
}
