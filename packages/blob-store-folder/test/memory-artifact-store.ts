import type { ArtifactRow, ArtifactStore, NewArtifact } from '@veetbot/ports';

/**
 * A small in-memory ports.ArtifactStore: rows keyed by (tenant, id), each tenant seeing only
 * its own, as RLS makes the real one do. `failNextInsert` simulates a metadata insert failing
 * after the blob was written.
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
    if (this.rows.has(key)) throw new Error('duplicate artifact id');
    const row: ArtifactRow = { ...artifact, tenantId };
    this.rows.set(key, row);
    return row;
  }

  async get(tenantId: string, artifactId: string): Promise<ArtifactRow | null> {
    return this.rows.get(`${tenantId}\u0000${artifactId}`) ?? null;
  }

  async listForRun(tenantId: string, runId: string): Promise<ArtifactRow[]> {
    return [...this.rows.values()].filter((row) => row.tenantId === tenantId && row.runId === runId);
  }
}
