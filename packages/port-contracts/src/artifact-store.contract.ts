import { randomUUID } from 'node:crypto';
import { StoreError } from '@veetbot/domain';
import type { ArtifactStore, NewArtifact } from '@veetbot/ports';
import { describe, expect, it } from 'vitest';

export interface ArtifactStoreSubject {
  readonly artifacts: ArtifactStore;
  /**
   * A run the store may hold artifacts of: a fresh tenant when `tenantId` is absent, else a new
   * run of that tenant (the real store's rows reference their tenant and run).
   */
  newRun(tenantId?: string): Promise<{ readonly tenantId: string; readonly runId: string }>;
}

/**
 * ports.ArtifactStore (ports/stores.ts), stated once: artifact metadata per tenant and run, the
 * bytes elsewhere (BlobStore). Every read is the tenant's own (row-level security in the real
 * store: "another tenant's id is simply absent"); a run's artifacts list oldest first.
 */
export function describeArtifactStoreContract(name: string, make: () => ArtifactStoreSubject | Promise<ArtifactStoreSubject>): void {
  const t0 = new Date(Date.UTC(2030, 0, 1, 12, 0, 0));
  const artifact = (runId: string, over: Partial<NewArtifact> = {}): NewArtifact => ({
    id: randomUUID(),
    runId,
    invocationId: randomUUID(),
    mediaType: 'application/json',
    bytes: 123,
    sha256: 'd'.repeat(64),
    trust: 'external_untrusted',
    createdAt: t0,
    ...over,
  });

  describe(`ArtifactStore contract: ${name}`, () => {
    it('insert returns the row (the artifact and its tenant) and get reads the same row back', async () => {
      const { artifacts, newRun } = await make();
      const { tenantId, runId } = await newRun();
      // Beyond 2^32 bytes and without an invocation (a run-level artifact): both survive the round trip.
      const written = artifact(runId, { bytes: 5_000_000_000, invocationId: null, trust: 'internal_tool', mediaType: 'text/plain' });
      const row = await artifacts.insert(tenantId, written);
      expect(row).toEqual({ ...written, tenantId });
      expect(await artifacts.get(tenantId, written.id)).toEqual(row);
      expect((await artifacts.get(tenantId, written.id))?.createdAt).toBeInstanceOf(Date);
    });

    it("get is null for an unknown id and for another tenant's artifact", async () => {
      const { artifacts, newRun } = await make();
      const a = await newRun();
      const b = await newRun();
      const written = artifact(a.runId);
      await artifacts.insert(a.tenantId, written);
      expect(await artifacts.get(a.tenantId, randomUUID())).toBeNull();
      expect(await artifacts.get(b.tenantId, written.id)).toBeNull();
    });

    it("listForRun gives the run's own artifacts, oldest first, and nothing to another tenant", async () => {
      const { artifacts, newRun } = await make();
      const { tenantId, runId } = await newRun();
      const other = await newRun(tenantId);
      const stranger = await newRun();
      const at = (ms: number) => new Date(t0.getTime() + ms);
      // Inserted out of order: the list follows created_at, not insertion.
      const late = await artifacts.insert(tenantId, artifact(runId, { createdAt: at(2_000) }));
      const early = await artifacts.insert(tenantId, artifact(runId, { createdAt: at(1_000) }));
      await artifacts.insert(tenantId, artifact(other.runId));
      expect(await artifacts.listForRun(tenantId, runId)).toEqual([early, late]);
      expect(await artifacts.listForRun(stranger.tenantId, runId)).toEqual([]);
      expect(await artifacts.listForRun(tenantId, randomUUID())).toEqual([]);
    });

    it('refuses a second artifact with the same id as store.unique_violation, keeping the first', async () => {
      const { artifacts, newRun } = await make();
      const { tenantId, runId } = await newRun();
      const first = await artifacts.insert(tenantId, artifact(runId));
      const refusal = await artifacts.insert(tenantId, artifact(runId, { id: first.id, mediaType: 'text/plain' })).then(
        () => null,
        (e: unknown) => e,
      );
      expect(StoreError.isInstance(refusal) && refusal.code).toBe('store.unique_violation');
      expect(await artifacts.get(tenantId, first.id)).toEqual(first);
    });
  });
}
