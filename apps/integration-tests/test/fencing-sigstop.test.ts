import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pauseWhenIdle } from '../src/crash-child-process';
import { argumentsFor, CHILD_LEASE_TTL_MS, modelCall, openCrashScene, TERMINAL_EVENTS, type CrashScene } from '../src/crash-scene';

/**
 * Fencing against a worker that is not dead, only paused (issue 3, "Proofs"): a REAL worker
 * process claims a call and, inside the tool (after the watermark), is frozen with SIGSTOP past
 * its 2 s lease. Another worker — the test process — takes the run over (acquiring the lease
 * bumps the fencing token) and recovers the row. Then the frozen worker is continued
 * (SIGCONT): it finishes the tool and tries to persist its result at step 13, and the fence
 * refuses it. The row keeps the second worker's outcome, the stale worker reports the
 * FencingError, and there is no second terminal event.
 */

let scene: CrashScene;

beforeAll(async () => {
  scene = await openCrashScene({ warmChildren: 1 });
}, 120_000);

afterAll(async () => {
  await scene?.close();
});

const CASES = [
  // Re-executed by the new owner: its outcome is SUCCEEDED, attempt 2. The stale worker's late effect still reaches the world (the fence guards the database, not the outbox) — harmless for this class.
  { toolName: 'demo.crash_idempotent', recovered: { status: 'succeeded', reasonCode: 'tool.ok', attemptNumber: 2 }, effectsByNewOwner: 1 },
  // Watermark set, NON_IDEMPOTENT: the new owner records UNCERTAIN and sends nothing. The stale worker's effect then really escapes: UNCERTAIN was the right answer.
  {
    toolName: 'demo.external_write',
    recovered: { status: 'uncertain', reasonCode: 'tool.outcome_unknown', attemptNumber: 1 },
    effectsByNewOwner: 0,
  },
] as const;

describe('fencing: a worker paused with SIGSTOP past its lease', () => {
  it.each(CASES)(
    '$toolName: the stale worker’s step-13 write is refused; the row keeps the new owner’s outcome',
    async ({ toolName, recovered, effectsByNewOwner }) => {
      const runId = await scene.newRun();
      const call = modelCall('call-paused', toolName, argumentsFor(toolName, `paused ${toolName}`));
      const before = (await scene.outbox(toolName)).length;
      const { child } = scene.child({ runId, calls: [call], inTool: { point: 'before_effect', action: 'wait' } });
      const { owner, applicationName } = await child.message('ready');
      await child.message('in_tool');

      const claimed = (await scene.rows(runId))[0]!;
      expect(claimed).toMatchObject({ status: 'running', attemptNumber: 1 });
      expect(claimed.effectSentAt).not.toBeNull();
      const heldBy = await scene.stores.runs.get(scene.tenantId, runId);
      expect(heldBy?.leaseOwner).toBe(owner);

      // Frozen, with none of its connections inside a transaction; then past its lease, for real.
      await pauseWhenIdle(child, scene.database.database, applicationName);
      try {
        await new Promise((resolve) => setTimeout(resolve, CHILD_LEASE_TTL_MS + 500));

        // Another worker takes the run over (a new fencing token) and recovers the row.
        const b = scene.world(`worker-b-${toolName}`);
        const report = await b.runtime.sweep();
        expect(report).toMatchObject({ examined: 1, failed: 0, skipped: 0 });
        const afterTakeover = await scene.stores.runs.get(scene.tenantId, runId);
        expect(afterTakeover!.fencingToken).toBeGreaterThan(heldBy!.fencingToken);
        expect(afterTakeover!.leaseOwner).toBeNull();
      } finally {
        child.signal('SIGCONT');
      }
      const settled = (await scene.rows(runId))[0]!;
      expect(settled).toMatchObject({ id: claimed.id, ...recovered, idempotencyKey: claimed.idempotencyKey });
      const eventsBefore = await scene.eventsOf(runId, claimed.id);
      expect(eventsBefore.filter((e) => TERMINAL_EVENTS.has(e.type))).toHaveLength(1);

      // The stale worker wakes up inside the tool, finishes it, and reaches step 13: refused.
      child.send('resume');
      const reported = await child.message('error');
      expect(reported).toMatchObject({ name: 'FencingError', code: 'store.fenced' });
      expect(reported.stepsReached).toContain(13);
      expect(reported.stepsReached).not.toContain(14);
      expect(await child.exited).toEqual({ code: 0, signal: null });

      // Nothing it tried to write landed: the row is the new owner's, and one terminal event.
      expect(await scene.rows(runId)).toEqual([settled]);
      const events = await scene.eventsOf(runId, claimed.id);
      expect(events).toEqual(eventsBefore);
      expect(events.filter((e) => TERMINAL_EVENTS.has(e.type))).toHaveLength(1);
      // The stale worker could not release the lease it no longer held either.
      expect((await scene.stores.runs.get(scene.tenantId, runId))?.leaseOwner).toBeNull();

      // The outbox: the new owner's effect (if it ran one), then the stale worker's late effect, all under the one key.
      const lines = (await scene.outbox(toolName)).slice(before);
      expect(lines.map((l) => l.key)).toEqual(Array.from({ length: effectsByNewOwner + 1 }, () => claimed.idempotencyKey));
      if (toolName === 'demo.crash_idempotent') expect(lines.map((l) => l.rest.split('\t')[0])).toEqual(['2', '1']);
    },
  );
});
