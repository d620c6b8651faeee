import type { TenantStepQuotas } from '@veetbot/domain';
import type { PendingStep, StepOpening, Stores } from '@veetbot/ports';
import { describe, expect, it } from 'vitest';
import { createStepQueue, type DatabaseStepQueue } from '../../src/step-queue/step-queue';
import { createStores } from '../../src/stores';
import { type HarnessFactory, later, newRun, newScene, type Scene, type StoreHarness } from './harness';

/** Older than the other suites' steps (2030), so these come first within a turn. */
const EARLY = new Date(Date.UTC(1991, 0, 1));
const NOW = new Date(Date.UTC(2041, 0, 1));

/** `count` runs of the scene's tenant, each with one pending step, created a millisecond apart from `from`. */
async function pendingRuns(h: StoreHarness, scene: Scene, count: number, from: Date): Promise<PendingStep[]> {
  const out: PendingStep[] = [];
  for (let i = 0; i < count; i += 1) {
    const runId = await newRun(h, scene.tenantId, scene.sessionId, scene.t0);
    await h.stores.steps.insert(scene.tenantId, { runId, stepNumber: 1, batch: { version: 1 }, createdAt: later(from, i) });
    out.push({ tenantId: scene.tenantId, runId, stepNumber: 1 });
  }
  return out;
}

/** A worker's opening of a claimed step (batch null), its lease live for a minute after NOW. */
function openClaimed(stores: Stores, step: PendingStep, owner: string): Promise<StepOpening> {
  return stores.steps.open(step.tenantId, {
    runId: step.runId,
    stepNumber: step.stepNumber,
    batch: null,
    createdAt: NOW,
    owner,
    leaseExpiresAt: later(NOW, 60_000),
    now: NOW,
  });
}

async function withQueue<T>(
  h: StoreHarness,
  quotas: TenantStepQuotas | undefined,
  fn: (queue: DatabaseStepQueue) => Promise<T>,
): Promise<T> {
  const queue = await createStepQueue(h.database, quotas === undefined ? {} : { quotas });
  try {
    return await fn(queue);
  } finally {
    await queue.close();
  }
}

const of = (claims: readonly PendingStep[], ...tenants: string[]) => claims.filter((c) => tenants.includes(c.tenantId));
const runsOf = (claims: readonly PendingStep[]) => claims.map((c) => c.runId);

/**
 * docs/adr/0070: the claim is fair across tenants (the fewest steps in flight first, then round
 * robin, oldest first within a tenant) and honours the operator's per-tenant quota, which the
 * step's opening checks again so that racing claimers cannot exceed it.
 */
export function tenantFairClaimsContract(get: HarnessFactory): void {
  describe('fair claims across tenants and the per-tenant quota', () => {
    it("round robin: a flooding tenant's backlog does not go before a quiet tenant's later step", async () => {
      const h = get();
      const noisy = await newScene(h);
      const quiet = await newScene(h);
      const flood = await pendingRuns(h, noisy, 6, EARLY);
      // Stored after the whole flood: oldest-first would claim it seventh.
      const [q1, q2] = await pendingRuns(h, quiet, 2, later(EARLY, 1_000));
      await withQueue(h, undefined, async (queue) => {
        const claimed = of(await queue.claimPending(1000, NOW), noisy.tenantId, quiet.tenantId);
        expect(runsOf(claimed)).toEqual(runsOf([flood[0]!, q1!, flood[1]!, q2!, ...flood.slice(2)]));
      });
    });

    it('the tenant with fewer steps in flight goes first', async () => {
      const h = get();
      const busy = await newScene(h);
      const idle = await newScene(h);
      const [b1, b2, b3, b4] = await pendingRuns(h, busy, 4, EARLY);
      const [i1, i2] = await pendingRuns(h, idle, 2, later(EARLY, 1_000));
      // Two of the busy tenant's steps run under live leases.
      expect((await openClaimed(h.stores, b1!, 'worker-a')).kind).toBe('opened');
      expect((await openClaimed(h.stores, b2!, 'worker-b')).kind).toBe('opened');
      await withQueue(h, undefined, async (queue) => {
        const claimed = of(await queue.claimPending(1000, NOW), busy.tenantId, idle.tenantId);
        // idle: turns 1 and 2; busy: turns 3 and 4 (two in flight).
        expect(runsOf(claimed)).toEqual(runsOf([i1!, i2!, b3!, b4!]));
      });
    });

    it('a tenant at its quota is not claimed until one of its steps ends; the default applies to the others', async () => {
      const h = get();
      const capped = await newScene(h);
      const other = await newScene(h);
      const quotas: TenantStepQuotas = { default: 1, tenants: { [capped.tenantId]: 2 } };
      const stores = createStores(h.database, { quotas });
      const steps = await pendingRuns(h, capped, 5, EARLY);
      const others = await pendingRuns(h, other, 3, EARLY);
      await withQueue(h, quotas, async (queue) => {
        // Room for two of the capped tenant's and one of the other's (the default quota).
        expect(runsOf(of(await queue.claimPending(1000, NOW), capped.tenantId))).toEqual(runsOf(steps.slice(0, 2)));
        expect(runsOf(of(await queue.claimPending(1000, NOW), other.tenantId))).toEqual(runsOf(others.slice(0, 1)));
        expect((await openClaimed(stores, steps[0]!, 'worker-a')).kind).toBe('opened');
        expect((await openClaimed(stores, steps[1]!, 'worker-b')).kind).toBe('opened');
        // At its quota: none of its steps is claimed, and an opening that raced is refused, unwritten.
        expect(of(await queue.claimPending(1000, NOW), capped.tenantId)).toEqual([]);
        expect(await openClaimed(stores, steps[2]!, 'worker-c')).toEqual({ kind: 'over_quota' });
        expect((await h.stores.steps.get(capped.tenantId, steps[2]!.runId, 1))?.status).toBe('pending');
        expect((await h.stores.runs.get(capped.tenantId, steps[2]!.runId))?.leaseOwner).toBeNull();
        // A step that ends makes room for exactly one more.
        await h.stores.steps.setStatus(capped.tenantId, steps[0]!.runId, 1, 'completed');
        expect(runsOf(of(await queue.claimPending(1000, NOW), capped.tenantId))).toEqual(runsOf([steps[2]!]));
        expect((await openClaimed(stores, steps[2]!, 'worker-c')).kind).toBe('opened');
        // The in-process path (a batch given) is not queued and not counted against the quota.
        expect((await openWithBatch(stores, capped)).kind).toBe('opened');
        // A lease that expired (its worker died) no longer counts as in flight: its step is claimable again.
        const afterExpiry = later(NOW, 61_000);
        expect(of(await queue.claimPending(1000, afterExpiry), capped.tenantId)).toHaveLength(2);
      });
    });

    it('racing claimers never run more of a tenant at once than its quota', async () => {
      const h = get();
      const scene = await newScene(h);
      const quota = 2;
      const quotas: TenantStepQuotas = { default: null, tenants: { [scene.tenantId]: quota } };
      const steps = await pendingRuns(h, scene, 10, EARLY);
      const workers = 5;
      const opened: string[] = [];
      const refused: string[] = [];
      const queues = await Promise.all(Array.from({ length: workers }, () => createStepQueue(h.database, { quotas })));
      try {
        // Each "worker" has its own stores over the same database (the pool's connections on
        // PostgreSQL): it claims, then opens every step of this tenant it was given, all at once.
        await Promise.all(
          queues.map(async (queue, w) => {
            const stores = createStores(h.database, { quotas });
            for (let round = 0; round < 3; round += 1) {
              const claimed = of(await queue.claimPending(1000, NOW), scene.tenantId);
              const results = await Promise.all(claimed.map((step) => openClaimed(stores, step, `worker-${w}`)));
              for (const [i, r] of results.entries()) (r.kind === 'opened' ? opened : refused).push(claimed[i]!.runId);
            }
          }),
        );
      } finally {
        await Promise.all(queues.map((q) => q.close()));
      }
      expect(new Set(opened).size).toBe(opened.length);
      expect(opened).toHaveLength(quota);
      const running = await Promise.all(steps.map((s) => h.stores.steps.get(scene.tenantId, s.runId, 1)));
      expect(running.filter((row) => row?.status === 'running')).toHaveLength(quota);
      expect(running.filter((row) => row?.status === 'pending')).toHaveLength(steps.length - quota);
    });

    it("racing openings of one tenant's claimed steps: exactly its quota open, the rest stay pending and unleased", async () => {
      const h = get();
      const scene = await newScene(h);
      const quota = 3;
      const stores = createStores(h.database, { quotas: { default: null, tenants: { [scene.tenantId]: quota } } });
      const steps = await pendingRuns(h, scene, 12, EARLY);
      // Claims taken before any of them opened (or by a worker started without the quota): every
      // step reaches an opening at the same moment, each by a different worker.
      const results = await Promise.all(steps.map((step, i) => openClaimed(stores, step, `worker-${i}`)));
      expect(results.filter((r) => r.kind === 'opened')).toHaveLength(quota);
      expect(results.filter((r) => r.kind === 'over_quota')).toHaveLength(steps.length - quota);
      const runs = await Promise.all(steps.map((s) => h.stores.runs.get(scene.tenantId, s.runId)));
      expect(runs.filter((run) => run?.leaseOwner !== null)).toHaveLength(quota);
    });
  });
}

/** An in-process submission's opening (a batch given) of a fresh run of the scene's tenant. */
async function openWithBatch(stores: Stores, scene: Scene): Promise<StepOpening> {
  const run = await stores.runs.create(scene.tenantId, {
    sessionId: scene.sessionId,
    deadlineAt: later(scene.t0, 3_600_000),
    budgets: { tool_calls: 100 },
    createdAt: scene.t0,
  });
  return stores.steps.open(scene.tenantId, {
    runId: run.id,
    stepNumber: 1,
    batch: { version: 1 },
    createdAt: NOW,
    owner: 'in-process',
    leaseExpiresAt: later(NOW, 60_000),
    now: NOW,
  });
}
