import { FencingError, StoreError } from '@veetbot/domain';
import { describe, expect, it } from 'vitest';
import { type HarnessFactory, later, newScene } from './harness';

/** Run leases with fencing (ARCHITECTURE.md "Processes": PostgreSQL is the only coordinator). */
export function runStoreContract(get: HarnessFactory): void {
  describe('RunStore', () => {
    it('creates and reads a run with its deadline and budgets', async () => {
      const h = get();
      const scene = await newScene(h);
      const run = await h.stores.runs.get(scene.tenantId, scene.runId);
      expect(run).toMatchObject({ status: 'running', budgets: { tool_calls: 100 }, leaseOwner: null, fencingToken: 0, parentRunId: null });
      expect(run?.deadlineAt.getTime()).toBe(later(scene.t0, 3_600_000).getTime());
      const child = await h.stores.runs.create(scene.tenantId, {
        sessionId: scene.sessionId,
        parentRunId: scene.runId,
        deadlineAt: scene.t0,
        budgets: {},
        createdAt: scene.t0,
      });
      expect(child.parentRunId).toBe(scene.runId);
      const finished = await h.stores.runs.setStatus(scene.tenantId, child.id, 'cancelled', later(scene.t0, 9));
      expect(finished.status).toBe('cancelled');
      expect(finished.finishedAt?.getTime()).toBe(later(scene.t0, 9).getTime());
    });

    it('a live lease is exclusive; the token strictly increases on every acquisition', async () => {
      const h = get();
      const scene = await newScene(h);
      const { runs } = h.stores;
      const a1 = await runs.acquireLease(scene.tenantId, scene.runId, 'worker-a', 1_000, scene.t0);
      // The run comes back as the acquisition left it.
      expect(a1?.run).toEqual(await runs.get(scene.tenantId, scene.runId));
      expect(a1?.run).toMatchObject({ leaseOwner: 'worker-a', fencingToken: a1?.fencingToken, status: 'running' });
      expect(a1?.fencingToken).toBe(1);
      expect(a1?.leaseExpiresAt.getTime()).toBe(later(scene.t0, 1_000).getTime());
      expect(await runs.acquireLease(scene.tenantId, scene.runId, 'worker-b', 1_000, later(scene.t0, 999))).toBeNull();
      // The holder re-acquiring gets a new token too (its older token is fenced out).
      const a2 = await runs.acquireLease(scene.tenantId, scene.runId, 'worker-a', 1_000, later(scene.t0, 500));
      expect(a2?.fencingToken).toBe(2);
      // Expired: anyone may take it.
      const b = await runs.acquireLease(scene.tenantId, scene.runId, 'worker-b', 1_000, later(scene.t0, 1_500));
      expect(b?.fencingToken).toBe(3);
      expect((await runs.get(scene.tenantId, scene.runId))?.leaseOwner).toBe('worker-b');
    });

    it('of many workers racing for one free run, exactly one wins', async () => {
      const h = get();
      const scene = await newScene(h);
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => h.stores.runs.acquireLease(scene.tenantId, scene.runId, `worker-${i}`, 60_000, scene.t0)),
      );
      const winners = results.filter((r) => r !== null);
      expect(winners).toHaveLength(1);
      expect(winners[0]?.fencingToken).toBe(1);
    });

    it('renew extends the holder; release frees the run at once and fences the released token', async () => {
      const h = get();
      const scene = await newScene(h);
      const { runs } = h.stores;
      const acquired = await runs.acquireLease(scene.tenantId, scene.runId, 'worker-a', 1_000, scene.t0);
      const fence = { runId: scene.runId, fencingToken: acquired?.fencingToken ?? -1 };
      const renewed = await runs.renewLease(scene.tenantId, fence, 5_000, later(scene.t0, 900));
      expect(renewed.leaseExpiresAt.getTime()).toBe(later(scene.t0, 5_900).getTime());
      expect(await runs.acquireLease(scene.tenantId, scene.runId, 'worker-b', 1_000, later(scene.t0, 2_000))).toBeNull();
      expect(await runs.releaseLease(scene.tenantId, fence)).toBe(true);
      await expect(runs.renewLease(scene.tenantId, fence, 1_000, later(scene.t0, 2_001))).rejects.toSatisfy(FencingError.isInstance);
      const b = await runs.acquireLease(scene.tenantId, scene.runId, 'worker-b', 1_000, later(scene.t0, 2_002));
      expect(b?.fencingToken).toBe(fence.fencingToken + 1);
    });

    it('acquiring an unknown run is store.not_found, not a silent null', async () => {
      const h = get();
      const scene = await newScene(h);
      await expect(h.stores.runs.acquireLease(scene.tenantId, crypto.randomUUID(), 'w', 1_000, scene.t0)).rejects.toSatisfy(
        (e: unknown) => StoreError.isInstance(e) && e.code === 'store.not_found',
      );
    });
  });
}
