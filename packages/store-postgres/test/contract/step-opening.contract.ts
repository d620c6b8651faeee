import { describe, expect, it } from 'vitest';
import { createStepQueue } from '../../src/step-queue/step-queue';
import { type HarnessFactory, intent, lease, later, newRun, newScene } from './harness';

/**
 * docs/adr/0049: a step's opening and its finish, each one statement. The opening checks the run,
 * its session and the lease in that order and writes nothing unless it opens; the finish writes
 * under the lease and lets go of it last.
 */
export function stepOpeningContract(get: HarnessFactory): void {
  describe('StepStore.open and finish', () => {
    const batch = { version: 1, calls: [] };

    it('opens a new step: the lease taken, the step stored RUNNING, the tallies read', async () => {
      const h = get();
      const scene = await newScene(h);
      const before = await h.stores.runs.get(scene.tenantId, scene.runId);
      // Two rows of step 1 (the earlier step) and one of step 3 (a later one).
      await h.stores.invocations.insertIntent(scene.tenantId, intent(scene), []);
      await h.stores.invocations.insertIntent(scene.tenantId, intent(scene), []);
      await h.stores.invocations.insertIntent(scene.tenantId, intent(scene, { stepNumber: 3 }), []);
      const opened = await h.stores.steps.open(scene.tenantId, {
        runId: scene.runId,
        stepNumber: 2,
        batch,
        createdAt: scene.t0,
        owner: 'w1',
        leaseExpiresAt: later(scene.t0, 30_000),
        now: scene.t0,
      });
      if (opened.kind !== 'opened') throw new Error(`not opened: ${opened.kind}`);
      expect(opened.inserted).toBe(true);
      expect(opened.step).toMatchObject({ runId: scene.runId, stepNumber: 2, status: 'running', batch });
      expect(opened.run.leaseOwner).toBe('w1');
      expect(opened.run.fencingToken).toBe((before?.fencingToken ?? 0) + 1);
      expect(opened.run.leaseExpiresAt?.getTime()).toBe(later(scene.t0, 30_000).getTime());
      expect(opened.session.id).toBe(scene.sessionId);
      expect(opened.earlier?.rows).toBe(2);
      // The harness's run has no maximum_tool_calls: the later steps are not read.
      expect(opened.later).toBeNull();
      expect(await h.stores.steps.get(scene.tenantId, scene.runId, 2)).toMatchObject({ status: 'running' });
    });

    it('keeps the run breaker evidence (docs/adr/0078): written by a finish that releases its lease, read with the earlier tally', async () => {
      const h = get();
      const scene = await newScene(h);
      const open = (stepNumber: number, owner: string, tallyHeld?: { fencingToken: number; throughStep: number }) =>
        h.stores.steps.open(scene.tenantId, {
          runId: scene.runId,
          stepNumber,
          batch,
          createdAt: scene.t0,
          owner,
          leaseExpiresAt: later(scene.t0, 30_000),
          now: scene.t0,
          tallyHeld,
        });
      const evidence = (restarts: number) => ({
        version: 1 as const,
        evidence_restarts: restarts,
        calls: [{ name: 'web.fetch', arguments_hash: 'a'.repeat(64), discounted: restarts, last_evidence_key: `k${restarts}` }],
      });
      const first = await open(1, 'w1');
      if (first.kind !== 'opened') throw new Error(first.kind);
      expect(first.evidence).toBeNull();
      const finish = (stepNumber: number, fencingToken: number, breakerEvidence: ReturnType<typeof evidence> | null) =>
        h.stores.steps.finish(scene.tenantId, {
          runId: scene.runId,
          stepNumber,
          fencingToken,
          callIds: [],
          failReason: null,
          at: scene.t0,
          breakerEvidence,
        });
      expect((await finish(1, first.run.fencingToken, evidence(1))).released).toBe(true);
      const second = await open(2, 'w1');
      if (second.kind !== 'opened') throw new Error(second.kind);
      expect(second.evidence).toEqual(evidence(1));
      // A finish without evidence leaves it; a fenced-out finish never writes it.
      expect((await finish(2, second.run.fencingToken, null)).released).toBe(true);
      const third = await open(3, 'w1');
      if (third.kind !== 'opened') throw new Error(third.kind);
      expect(third.evidence).toEqual(evidence(1));
      expect((await finish(3, third.run.fencingToken - 1, evidence(9))).released).toBe(false);
      expect((await finish(3, third.run.fencingToken, evidence(2))).released).toBe(true);
      // The caller's tally still holds: neither the tally nor the evidence is read again.
      const fourth = await open(4, 'w1', { fencingToken: third.run.fencingToken, throughStep: 3 });
      if (fourth.kind !== 'opened') throw new Error(fourth.kind);
      expect(fourth.earlier).toBeNull();
      expect(fourth.evidence).toBeNull();
      await finish(4, fourth.run.fencingToken, null);
      const fifth = await open(5, 'w2');
      if (fifth.kind !== 'opened') throw new Error(fifth.kind);
      expect(fifth.evidence).toEqual(evidence(2));
      // Another tenant reads none of it (row-level security).
      const other = await newScene(h);
      const view = await h.stores.steps.open(other.tenantId, {
        runId: scene.runId,
        stepNumber: 6,
        batch,
        createdAt: scene.t0,
        owner: 'w3',
        leaseExpiresAt: later(scene.t0, 30_000),
        now: scene.t0,
      });
      expect(view.kind).toBe('run_not_found');
    });

    it("skips the earlier steps' tally only when the caller's copy is still true", async () => {
      const h = get();
      const scene = await newScene(h);
      await h.stores.invocations.insertIntent(scene.tenantId, intent(scene), []);
      const open = (stepNumber: number, tallyHeld?: { fencingToken: number; throughStep: number }) =>
        h.stores.steps.open(scene.tenantId, {
          runId: scene.runId,
          stepNumber,
          batch,
          createdAt: scene.t0,
          owner: 'w1',
          leaseExpiresAt: later(scene.t0, 30_000),
          now: scene.t0,
          tallyHeld,
        });
      const first = await open(2);
      if (first.kind !== 'opened') throw new Error(first.kind);
      const token = first.run.fencingToken;
      // Held through step 2 under this token: step 3 needs no read.
      const next = await open(3, { fencingToken: token, throughStep: 2 });
      if (next.kind !== 'opened') throw new Error(next.kind);
      expect(next.earlier).toBeNull();
      // The token moved on (step 3's opening took the lease again): the same copy is stale now.
      const stale = await open(4, { fencingToken: token, throughStep: 3 });
      if (stale.kind !== 'opened') throw new Error(stale.kind);
      expect(stale.earlier?.rows).toBe(1);
      // A copy through another step than the one before: read.
      const skipped = await open(6, { fencingToken: stale.run.fencingToken, throughStep: 4 });
      if (skipped.kind !== 'opened') throw new Error(skipped.kind);
      expect(skipped.earlier?.rows).toBe(1);
    });

    it('reads the later steps when the run has a tool budget', async () => {
      const h = get();
      const scene = await newScene(h);
      const run = await h.stores.runs.create(scene.tenantId, {
        sessionId: scene.sessionId,
        deadlineAt: later(scene.t0, 3_600_000),
        budgets: { maximum_tool_calls: 10 },
        createdAt: scene.t0,
      });
      await h.stores.invocations.insertIntent(scene.tenantId, intent({ ...scene, runId: run.id }, { stepNumber: 5 }), []);
      const opened = await h.stores.steps.open(scene.tenantId, {
        runId: run.id,
        stepNumber: 2,
        batch,
        createdAt: scene.t0,
        owner: 'w1',
        leaseExpiresAt: later(scene.t0, 30_000),
        now: scene.t0,
      });
      if (opened.kind !== 'opened') throw new Error(`not opened: ${opened.kind}`);
      expect(opened.earlier?.rows).toBe(0);
      expect(opened.later?.rows).toBe(1);
    });

    it("charges a budgeted run its children (docs/adr/0050): a live child its allowance, an ended one its subtree's rows", async () => {
      const h = get();
      const scene = await newScene(h);
      const { runs } = h.stores;
      const run = (parentRunId: string | null, budgets: Record<string, unknown>) =>
        runs.create(scene.tenantId, {
          sessionId: scene.sessionId,
          ...(parentRunId === null ? {} : { parentRunId }),
          deadlineAt: later(scene.t0, 3_600_000),
          budgets,
          createdAt: scene.t0,
        });
      const rows = async (runId: string, n: number, toolName = 'demo.external_write') => {
        for (let i = 0; i < n; i += 1)
          await h.stores.invocations.insertIntent(scene.tenantId, intent({ ...scene, runId }, { toolName }), []);
      };
      const root = await run(null, { maximum_tool_calls: 20 });
      const live = await run(root.id, { maximum_tool_calls: 5 });
      await rows(live.id, 1);
      const ended = await run(root.id, { maximum_tool_calls: 6 });
      // Its rows (an orchestration's own refunded) and its own ended child's rows count; a live
      // grandchild its allowance.
      await rows(ended.id, 2);
      await rows(ended.id, 1, 'sandbox.run_orchestration');
      const grandEnded = await run(ended.id, { maximum_tool_calls: 3 });
      await rows(grandEnded.id, 1);
      await run(ended.id, { maximum_tool_calls: 2 });
      await runs.setStatus(scene.tenantId, grandEnded.id, 'succeeded', scene.t0);
      await runs.setStatus(scene.tenantId, ended.id, 'succeeded', scene.t0);
      // Never more than its allowance: an ended child that overspent (it cannot) is capped.
      const capped = await run(root.id, { maximum_tool_calls: 1 });
      await rows(capped.id, 3);
      await runs.setStatus(scene.tenantId, capped.id, 'failed', scene.t0);
      // Ended while a step of it still holds its lease: its calls in flight may yet write rows.
      const inFlight = await run(root.id, { maximum_tool_calls: 4 });
      await rows(inFlight.id, 1);
      await runs.acquireLease(scene.tenantId, inFlight.id, 'w-child', 30_000, scene.t0);
      await runs.setStatus(scene.tenantId, inFlight.id, 'succeeded', scene.t0);
      // 5 (live) + (2 + 1 + 2) (ended) + 1 (capped) + 4 (in flight)
      expect(await runs.delegatedCalls(scene.tenantId, root.id)).toBe(15);
      const opened = await h.stores.steps.open(scene.tenantId, {
        runId: root.id,
        stepNumber: 1,
        batch,
        createdAt: scene.t0,
        owner: 'w1',
        leaseExpiresAt: later(scene.t0, 30_000),
        now: scene.t0,
      });
      if (opened.kind !== 'opened') throw new Error(`not opened: ${opened.kind}`);
      expect(opened.delegated).toBe(15);
      // Without a tool budget the opening reads nothing of the tree.
      const unbudgeted = await h.stores.steps.open(scene.tenantId, {
        runId: scene.runId,
        stepNumber: 1,
        batch,
        createdAt: scene.t0,
        owner: 'w1',
        leaseExpiresAt: later(scene.t0, 30_000),
        now: scene.t0,
      });
      if (unbudgeted.kind !== 'opened') throw new Error(`not opened: ${unbudgeted.kind}`);
      expect(unbudgeted.delegated).toBeNull();
      // Another tenant sees none of it.
      const other = await newScene(h);
      expect(await runs.delegatedCalls(other.tenantId, root.id)).toBe(0);
    });

    it('refuses in order — run, session, lease, a new step while waiting for the user — and writes nothing', async () => {
      const h = get();
      const scene = await newScene(h);
      const open = (runId: string, owner: string, stepNumber = 1, stepBatch: unknown = batch) =>
        h.stores.steps.open(scene.tenantId, {
          runId,
          stepNumber,
          batch: stepBatch,
          createdAt: scene.t0,
          owner,
          leaseExpiresAt: later(scene.t0, 30_000),
          now: scene.t0,
        });
      expect(await open('00000000-0000-4000-8000-000000000000', 'w1')).toEqual({ kind: 'run_not_found' });
      // Another tenant's run is not found either (row-level security).
      const other = await newScene(h);
      expect(await open(other.runId, 'w1')).toEqual({ kind: 'run_not_found' });

      // A live lease of another owner: busy, and neither the lease nor the step changes.
      const held = await lease(h, scene, 'w0', scene.t0);
      expect(await open(scene.runId, 'w1')).toEqual({ kind: 'busy' });
      expect((await h.stores.runs.get(scene.tenantId, scene.runId))?.fencingToken).toBe(held.fencingToken);
      expect(await h.stores.steps.get(scene.tenantId, scene.runId, 1)).toBeNull();
      await h.stores.runs.releaseLease(scene.tenantId, held);

      // Waiting for its user: a new step is refused, a stored one is opened.
      await h.stores.runs.setStatus(scene.tenantId, scene.runId, 'waiting_for_user', scene.t0);
      expect(await open(scene.runId, 'w1', 7)).toEqual({ kind: 'waiting_for_user' });
      expect(await h.stores.steps.get(scene.tenantId, scene.runId, 7)).toBeNull();
      await h.stores.steps.insert(scene.tenantId, { runId: scene.runId, stepNumber: 8, batch, createdAt: scene.t0 });
      expect((await open(scene.runId, 'w1', 8)).kind).toBe('opened');
      // A worker's claimed step (batch null) that is not stored.
      expect(await open(scene.runId, 'w1', 9, null)).toEqual({ kind: 'step_not_found' });

      // A closed session, then an ended run.
      const second = await newRun(h, scene.tenantId, scene.sessionId, scene.t0);
      await h.stores.sessions.close(scene.tenantId, scene.sessionId, scene.t0);
      expect((await open(second, 'w1')).kind).toBe('session_closed');
      await h.stores.runs.setStatus(scene.tenantId, second, 'cancelled', scene.t0);
      const ended = await open(second, 'w1');
      expect(ended.kind).toBe('run_not_active');
      expect((await h.stores.runs.get(scene.tenantId, second))?.leaseOwner).toBeNull();
    });

    it("a resubmission reads the stored step; a worker's PENDING step is marked RUNNING", async () => {
      const h = get();
      const scene = await newScene(h);
      await h.stores.steps.insert(scene.tenantId, { runId: scene.runId, stepNumber: 1, batch: { other: true }, createdAt: scene.t0 });
      const args = { runId: scene.runId, stepNumber: 1, createdAt: scene.t0, leaseExpiresAt: later(scene.t0, 30_000), now: scene.t0 };
      // With a batch: the stored step comes back untouched, for the runtime's resubmission check.
      const resubmitted = await h.stores.steps.open(scene.tenantId, { ...args, batch, owner: 'w1' });
      if (resubmitted.kind !== 'opened') throw new Error(resubmitted.kind);
      expect(resubmitted.inserted).toBe(false);
      expect(resubmitted.step).toMatchObject({ status: 'pending', batch: { other: true } });
      // The owner re-acquires its own lease (the token moves on); batch null: the worker's claim.
      const claimed = await h.stores.steps.open(scene.tenantId, { ...args, batch: null, owner: 'w1' });
      if (claimed.kind !== 'opened') throw new Error(claimed.kind);
      expect(claimed.run.fencingToken).toBe(resubmitted.run.fencingToken + 1);
      expect(claimed.step.status).toBe('running');
    });

    it("a queued step's finish sends the queue's done notification in its own commit", async () => {
      const h = get();
      const scene = await newScene(h);
      const queue = await createStepQueue(h.database);
      try {
        const opened = await h.stores.steps.open(scene.tenantId, {
          runId: scene.runId,
          stepNumber: 1,
          batch,
          createdAt: scene.t0,
          owner: 'w1',
          leaseExpiresAt: later(scene.t0, 30_000),
          now: scene.t0,
        });
        if (opened.kind !== 'opened') throw new Error(opened.kind);
        const step = { tenantId: scene.tenantId, runId: scene.runId, stepNumber: 1 };
        let woken = false;
        const wait = queue.waitForStep(step, 10_000).then(() => {
          woken = true;
        });
        // Without notifyDone nothing is sent: the wait is still armed after the finish.
        await h.stores.steps.finish(scene.tenantId, {
          runId: scene.runId,
          stepNumber: 1,
          fencingToken: opened.run.fencingToken - 1,
          callIds: [],
          failReason: null,
          at: scene.t0,
        });
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(woken).toBe(false);
        await h.stores.steps.finish(scene.tenantId, {
          runId: scene.runId,
          stepNumber: 1,
          fencingToken: opened.run.fencingToken,
          callIds: [],
          failReason: null,
          at: scene.t0,
          notifyDone: true,
        });
        const started = Date.now();
        await wait;
        // Woken by the notification, far inside the wait's 10 s bound.
        expect(Date.now() - started).toBeLessThan(5_000);
      } finally {
        await queue.close();
      }
    });

    it('finishes: the step completed, the run failed only when running, the lease released only by its token', async () => {
      const h = get();
      const scene = await newScene(h);
      const opened = await h.stores.steps.open(scene.tenantId, {
        runId: scene.runId,
        stepNumber: 1,
        batch,
        createdAt: scene.t0,
        owner: 'w1',
        leaseExpiresAt: later(scene.t0, 30_000),
        now: scene.t0,
      });
      if (opened.kind !== 'opened') throw new Error(opened.kind);
      const finish = { runId: scene.runId, stepNumber: 1, at: later(scene.t0, 5) };
      // One call with a terminal row, one whose row is still RUNNING: not complete.
      const done = intent(scene, { callId: 'call_done' });
      await h.stores.invocations.insertIntent(scene.tenantId, done, []);
      await h.stores.invocations.complete(
        scene.tenantId,
        done.id,
        { runId: scene.runId, fencingToken: opened.run.fencingToken },
        {
          status: 'succeeded',
          outcomeStatus: 'succeeded',
          reasonCode: 'tool.ok',
          result: null,
          error: null,
          outputBytes: 0,
          truncated: false,
          artifactId: null,
          finishedAt: later(scene.t0, 2),
        },
        [],
      );
      const open = intent(scene, { callId: 'call_open' });
      await h.stores.invocations.insertIntent(scene.tenantId, open, []);
      const partial = await h.stores.steps.finish(scene.tenantId, {
        ...finish,
        fencingToken: opened.run.fencingToken - 1,
        callIds: ['call_done', 'call_open'],
        failReason: null,
      });
      expect(partial.complete).toBe(false);
      expect(partial.rows.map((r) => [r.callId, r.status])).toEqual([
        ['call_done', 'succeeded'],
        ['call_open', 'authorized'],
      ]);
      expect(await h.stores.steps.get(scene.tenantId, scene.runId, 1)).toMatchObject({ status: 'running' });
      // A stale token changes nothing it fences: the lease stays.
      const stale = await h.stores.steps.finish(scene.tenantId, {
        ...finish,
        fencingToken: opened.run.fencingToken - 1,
        callIds: ['call_done'],
        failReason: null,
      });
      expect(stale).toMatchObject({ complete: true, failed: null, released: false });
      expect((await h.stores.runs.get(scene.tenantId, scene.runId))?.leaseOwner).toBe('w1');

      const ended = await h.stores.steps.finish(scene.tenantId, {
        ...finish,
        fencingToken: opened.run.fencingToken,
        callIds: ['call_done'],
        failReason: 'tool.loop_detected',
      });
      expect(ended.released).toBe(true);
      expect(ended.failed).toMatchObject({ id: scene.runId, status: 'failed', failureReason: 'tool.loop_detected' });
      expect(ended.failed?.finishedAt?.getTime()).toBe(later(scene.t0, 5).getTime());
      const run = await h.stores.runs.get(scene.tenantId, scene.runId);
      expect(run).toMatchObject({ status: 'failed', leaseOwner: null, leaseExpiresAt: null });
      expect(await h.stores.steps.get(scene.tenantId, scene.runId, 1)).toMatchObject({ status: 'completed' });

      // A run that is no longer running is not failed again.
      const again = await h.stores.steps.finish(scene.tenantId, {
        ...finish,
        fencingToken: opened.run.fencingToken,
        callIds: ['call_done'],
        failReason: 'run.deadline_exceeded',
      });
      expect(again).toMatchObject({ failed: null, released: false });
      expect((await h.stores.runs.get(scene.tenantId, scene.runId))?.failureReason).toBe('tool.loop_detected');
    });
  });
}
