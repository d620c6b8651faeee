import { randomUUID } from 'node:crypto';
import { StoreError } from '@veetbot/domain';
import type { PendingStep } from '@veetbot/ports';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createStepQueue, type DatabaseStepQueue } from '../../src/step-queue/step-queue';
import { type HarnessFactory, later, newRun, newScene, type Scene, type StoreHarness } from './harness';

/** Older than anything the other suites insert (they use 2030), so "oldest first" is ours. */
const EARLY = new Date(Date.UTC(1990, 0, 1));
const NOW = new Date(Date.UTC(2040, 0, 1));

const isCode = (code: string) => (e: unknown) => StoreError.isInstance(e) && e.code === code;

async function pendingStep(h: StoreHarness, scene: Scene, runId: string, stepNumber: number, createdAt: Date): Promise<PendingStep> {
  await h.stores.steps.insert(scene.tenantId, { runId, stepNumber, batch: { version: 1, secret: 'never-in-a-claim' }, createdAt });
  return { tenantId: scene.tenantId, runId, stepNumber };
}

const mine = (claims: PendingStep[], ...tenants: string[]) => claims.filter((c) => tenants.includes(c.tenantId));

async function withQueue<T>(h: StoreHarness, fn: (queue: DatabaseStepQueue) => Promise<T>): Promise<T> {
  const queue = await createStepQueue(h.database);
  try {
    return await fn(queue);
  } finally {
    await queue.close();
  }
}

/** Resolves to how long `promise` took, in ms. */
async function timed(promise: Promise<void>): Promise<number> {
  const started = performance.now();
  await promise;
  return performance.now() - started;
}

/**
 * The step queue (ports/step-queue.ts): what the api and the worker agree on. Claims across
 * tenants through the maintenance role, wake-ups over LISTEN/NOTIFY (PGlite: its own).
 */
export function stepQueueContract(get: HarnessFactory): void {
  describe('StepQueue', () => {
    it('claims pending steps of free or expired runs across tenants, oldest first, without changing them', async () => {
      const h = get();
      const a = await newScene(h);
      const b = await newScene(h);
      const first = await pendingStep(h, a, a.runId, 1, EARLY);
      const second = await pendingStep(h, b, b.runId, 1, later(EARLY, 1));
      const third = await pendingStep(h, a, a.runId, 2, later(EARLY, 2));
      await withQueue(h, async (queue) => {
        expect(mine(await queue.claimPending(2, NOW), a.tenantId, b.tenantId)).toEqual([first, second]);
        expect(mine(await queue.claimPending(1000, NOW), a.tenantId, b.tenantId)).toEqual([first, second, third]);
        // Claiming does not change the row: the run lease is the real claim.
        expect((await h.stores.steps.get(a.tenantId, a.runId, 1))?.status).toBe('pending');
        expect(await queue.claimPending(0, NOW)).toEqual([]);
      });
    });

    it('skips steps that are running or completed, runs leased live, and runs that are not running', async () => {
      const h = get();
      const s = await newScene(h);
      const leasedRun = await newRun(h, s.tenantId, s.sessionId, s.t0);
      const expiredRun = await newRun(h, s.tenantId, s.sessionId, s.t0);
      const cancelledRun = await newRun(h, s.tenantId, s.sessionId, s.t0);
      await pendingStep(h, s, s.runId, 1, EARLY);
      await h.stores.steps.setStatus(s.tenantId, s.runId, 1, 'running');
      await pendingStep(h, s, s.runId, 2, EARLY);
      await h.stores.steps.setStatus(s.tenantId, s.runId, 2, 'completed');
      await pendingStep(h, s, leasedRun, 1, EARLY);
      await h.stores.runs.acquireLease(s.tenantId, leasedRun, 'worker-a', 60_000, NOW);
      const expired = await pendingStep(h, s, expiredRun, 1, EARLY);
      await h.stores.runs.acquireLease(s.tenantId, expiredRun, 'worker-dead', 1_000, later(NOW, -5_000));
      await pendingStep(h, s, cancelledRun, 1, EARLY);
      await h.stores.runs.setStatus(s.tenantId, cancelledRun, 'cancelled', NOW);
      await withQueue(h, async (queue) => {
        expect(mine(await queue.claimPending(1000, NOW), s.tenantId)).toEqual([expired]);
        // Once the live lease expires, that run's step is claimable too.
        expect(mine(await queue.claimPending(1000, later(NOW, 60_000)), s.tenantId)).toHaveLength(2);
      });
    });

    it('claims a running step whose worker died (lease expired, never released), not one whose worker released it', async () => {
      const h = get();
      const s = await newScene(h);
      const releasedRun = await newRun(h, s.tenantId, s.sessionId, s.t0);
      const died = await pendingStep(h, s, s.runId, 1, EARLY);
      await h.stores.steps.setStatus(s.tenantId, s.runId, 1, 'running');
      await h.stores.runs.acquireLease(s.tenantId, s.runId, 'worker-died', 1_000, NOW);
      // A step left running by a worker that let go of the lease (an approval is pending).
      await pendingStep(h, s, releasedRun, 1, EARLY);
      await h.stores.steps.setStatus(s.tenantId, releasedRun, 1, 'running');
      const acquired = await h.stores.runs.acquireLease(s.tenantId, releasedRun, 'worker-ok', 1_000, NOW);
      await h.stores.runs.releaseLease(s.tenantId, { runId: releasedRun, fencingToken: acquired?.fencingToken ?? -1 });
      await withQueue(h, async (queue) => {
        // While the dead worker's lease is live: nothing.
        expect(mine(await queue.claimPending(1000, later(NOW, 500)), s.tenantId)).toEqual([]);
        expect(mine(await queue.claimPending(1000, later(NOW, 1_000)), s.tenantId)).toEqual([died]);
      });
    });

    it('the maintenance role may lock steps but never change them or read their batch', async () => {
      const h = get();
      const s = await newScene(h);
      await pendingStep(h, s, s.runId, 1, EARLY);
      const maintenance = <T>(query: ReturnType<typeof sql>) =>
        h.database.transaction({ role: 'maintenance' }, (tx) => tx.execute(query) as Promise<T>);
      await expect(maintenance(sql`update steps set status = 'completed' where run_id = ${s.runId}`)).rejects.toSatisfy(
        isCode('store.forbidden'),
      );
      await expect(maintenance(sql`select batch from steps where run_id = ${s.runId}`)).rejects.toSatisfy(isCode('store.forbidden'));
      await expect(maintenance(sql`delete from steps where run_id = ${s.runId}`)).rejects.toSatisfy(isCode('store.forbidden'));
      await expect(
        maintenance(
          sql`insert into steps (tenant_id, run_id, step_number, batch, created_at) values (${s.tenantId}, ${s.runId}, 9, '{}', now())`,
        ),
      ).rejects.toSatisfy(isCode('store.forbidden'));
      expect((await h.stores.steps.get(s.tenantId, s.runId, 1))?.status).toBe('pending');
    });

    it('notify wakes a waiting worker at once; without one the wait runs out', async () => {
      const h = get();
      const s = await newScene(h);
      const step = { tenantId: s.tenantId, runId: s.runId, stepNumber: 1 };
      await withQueue(h, async (queue) => {
        const idle = await timed(queue.waitForWork(150));
        expect(idle).toBeGreaterThanOrEqual(140);
        const waiting = timed(queue.waitForWork(10_000));
        await queue.notify(step);
        expect(await waiting).toBeLessThan(5_000);
      });
    });

    it('a notification that lands between two waits resolves the next wait at once', async () => {
      const h = get();
      const s = await newScene(h);
      await withQueue(h, async (queue) => {
        await queue.notify({ tenantId: s.tenantId, runId: s.runId, stepNumber: 1 });
        // Delivery is asynchronous: give it a moment to arrive with nobody waiting.
        await new Promise((r) => setTimeout(r, 100));
        expect(await timed(queue.waitForWork(10_000))).toBeLessThan(1_000);
        // ...once: the next wait runs its course again.
        expect(await timed(queue.waitForWork(100))).toBeGreaterThanOrEqual(90);
      });
    });

    it('an aborted signal ends a wait', async () => {
      const h = get();
      const s = await newScene(h);
      await withQueue(h, async (queue) => {
        const controller = new AbortController();
        const work = timed(queue.waitForWork(10_000, controller.signal));
        const step = timed(queue.waitForStep({ tenantId: s.tenantId, runId: s.runId, stepNumber: 1 }, 10_000, controller.signal));
        controller.abort();
        expect(await work).toBeLessThan(1_000);
        expect(await step).toBeLessThan(1_000);
        expect(await timed(queue.waitForWork(10_000, controller.signal))).toBeLessThan(100);
      });
    });

    it('notifyDone wakes the waiter of that step only, in another queue on the same database', async () => {
      const h = get();
      const s = await newScene(h);
      const step = { tenantId: s.tenantId, runId: s.runId, stepNumber: 1 };
      const other = { ...step, stepNumber: 2 };
      await withQueue(h, (api) =>
        withQueue(h, async (worker) => {
          const forStep = timed(api.waitForStep(step, 10_000));
          const forOther = timed(api.waitForStep(other, 400));
          await worker.notifyDone(step);
          expect(await forStep).toBeLessThan(5_000);
          expect(await forOther).toBeGreaterThanOrEqual(390);
          // And the other way round: the api's notify reaches the worker's queue.
          const waiting = timed(worker.waitForWork(10_000));
          await api.notify(step);
          expect(await waiting).toBeLessThan(5_000);
        }),
      );
    });

    it('ignores a stray NOTIFY on its channels that is not a step identity', async () => {
      const h = get();
      const s = await newScene(h);
      const step = { tenantId: s.tenantId, runId: s.runId, stepNumber: 1 };
      await withQueue(h, async (queue) => {
        const waiting = timed(queue.waitForStep(step, 300));
        await h.database.transaction({ role: 'owner' }, (tx) =>
          tx.execute(sql`select pg_notify('veetbot_step_done', ${'{"tenant_id": 1}'}), pg_notify('veetbot_step_done', 'not json')`),
        );
        expect(await waiting).toBeGreaterThanOrEqual(290);
      });
    });

    it('close ends every wait and a closed queue does not wait', async () => {
      const h = get();
      const s = await newScene(h);
      const queue = await createStepQueue(h.database);
      const waiting = timed(queue.waitForStep({ tenantId: s.tenantId, runId: randomUUID(), stepNumber: 1 }, 10_000));
      await queue.close();
      expect(await waiting).toBeLessThan(1_000);
      expect(await timed(queue.waitForWork(10_000))).toBeLessThan(100);
    });
  });
}
