import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideRecovery, type IdempotencyClass, type InvocationStatus } from '@veetbot/domain';
import type { InvocationRow } from '@veetbot/ports';
import type { EffectPoint } from '../src/crash-job';
import { argumentsFor, CHILD_LEASE_TTL_MS, modelCall, openCrashScene, TERMINAL_EVENTS, type CrashScene } from '../src/crash-scene';
import { TOOL_FOR_CLASS } from '../src/crash-tools';
import { laterClock } from '../src/crash-world';

/**
 * Hard gate 7: "A recorded crash at each of the fourteen pipeline steps recovers to the state the
 * recovery table specifies." For each idempotency class, a REAL worker process runs the durable
 * pipeline (Runtime.submitStep over PostgreSQL, holding the run lease with a 2 s TTL) and is
 * SIGKILLed as step n begins — and twice more inside step 10, after the watermark commit but
 * before the effect, and after the effect. A fresh worker (a new Runtime with another owner,
 * arriving after the dead one's lease expired) then runs the recovery sweep and the step is
 * resubmitted as the API would. The final state is derived from decideRecovery applied to the
 * row as the crash left it; demo.external_write's outbox never holds a key twice.
 */

type CrashPoint = number | EffectPoint;
const POINTS: readonly CrashPoint[] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 'before_effect', 'after_effect', 11, 12, 13, 14];
const CLASSES: readonly IdempotencyClass[] = ['non_idempotent', 'conditionally_idempotent', 'idempotent', 'read_only'];

const label = (point: CrashPoint): string =>
  point === 'before_effect'
    ? 'inside step 10, after the watermark, before the effect'
    : point === 'after_effect'
      ? 'inside step 10, after the effect'
      : `as step ${point} begins`;

/**
 * What the crash must leave behind, from the pipeline's shape alone (independent of the
 * recovery table): nothing is written before step 8's commit, step 9 claims, step 10 sets the
 * watermark before the tool starts, step 13 writes the terminal row.
 */
function leftBehind(point: CrashPoint): {
  readonly status: InvocationStatus | null;
  readonly watermark: boolean;
  readonly effects: number;
} {
  if (point === 'before_effect') return { status: 'running', watermark: true, effects: 0 };
  if (point === 'after_effect') return { status: 'running', watermark: true, effects: 1 };
  if (point <= 8) return { status: null, watermark: false, effects: 0 };
  if (point === 9) return { status: 'authorized', watermark: false, effects: 0 };
  if (point === 10) return { status: 'running', watermark: false, effects: 0 };
  if (point <= 13) return { status: 'running', watermark: true, effects: 1 };
  return { status: 'succeeded', watermark: true, effects: 1 };
}

interface Expected {
  readonly status: InvocationStatus;
  readonly reasonCode: string;
  readonly attemptNumber: number;
  /** Effects recovery adds. */
  readonly addedEffects: number;
  /** What the sweep reports. */
  readonly sweep: { examined: number; recovered: number; uncertain: number };
}

/** The recovery table (§ The effect watermark; § Deduplication, rules 2 and 4), applied to the row as found. */
function expectedRecovery(found: InvocationRow | null): Expected {
  const none = { examined: 0, recovered: 0, uncertain: 0 };
  // No row, or intent persisted but never claimed: nothing ran; the resubmission executes once.
  if (found === null || found.status === 'authorized')
    return { status: 'succeeded', reasonCode: 'tool.ok', attemptNumber: 1, addedEffects: 1, sweep: none };
  // Terminal: the recorded outcome, no execution.
  if (found.status !== 'running')
    return { status: found.status, reasonCode: found.reasonCode!, attemptNumber: found.attemptNumber, addedEffects: 0, sweep: none };
  const decision = decideRecovery(found.idempotencyClass, found.effectSentAt);
  if (decision === 'uncertain') {
    return {
      status: 'uncertain',
      reasonCode: 'tool.outcome_unknown',
      attemptNumber: found.attemptNumber,
      addedEffects: 0,
      sweep: { examined: 1, recovered: 0, uncertain: 1 },
    };
  }
  // re_execute and replay both claim again under the same key.
  return {
    status: 'succeeded',
    reasonCode: 'tool.ok',
    attemptNumber: found.attemptNumber + 1,
    addedEffects: 1,
    sweep: { examined: 1, recovered: 1, uncertain: 0 },
  };
}

/** The most effects one call may ever produce, by class: a non-idempotent effect happens at most once. */
const MAXIMUM_EFFECTS: Readonly<Record<IdempotencyClass, number>> = {
  non_idempotent: 1,
  conditionally_idempotent: 2,
  idempotent: 2,
  read_only: 2,
};

let scene: CrashScene;
const startedAt = performance.now();
const matrix: string[] = [];

beforeAll(async () => {
  scene = await openCrashScene({ warmChildren: 2 });
}, 120_000);

afterAll(async () => {
  await scene?.close();
  console.log(
    `[gate-07] ${matrix.length} crash cases (child processes SIGKILLed) in ${((performance.now() - startedAt) / 1000).toFixed(1)} s (crash+recovery ms each):\n  ${matrix.join('\n  ')}`,
  );
});

describe.each(CLASSES)('Hard gate 7: a %s call', (idempotencyClass) => {
  const toolName = TOOL_FOR_CLASS[idempotencyClass];

  it.each(POINTS.map((point) => ({ point, where: label(point) })))(
    'a worker SIGKILLed $where recovers as the recovery table says',
    async ({ point }) => {
      const runId = await scene.newRun();
      const call = modelCall('call-1', toolName, argumentsFor(toolName, `gate 7 ${idempotencyClass} ${String(point)}`));
      const before = (await scene.outbox(toolName)).length;

      // The worker process: killed by the signal, never by an exception it could catch.
      const caseStarted = performance.now();
      const { child } = scene.child({
        runId,
        calls: [call],
        dieAtStep: typeof point === 'number' ? point : null,
        inTool: typeof point === 'number' ? null : { point, action: 'die' },
      });
      const exit = await child.exited;
      const crashMs = performance.now() - caseStarted;
      expect(exit, `the child must die by SIGKILL; stderr: ${child.stderr}`).toEqual({ code: null, signal: 'SIGKILL' });
      expect(child.messages.map((m) => m.event)).toEqual(['loaded', 'ready', 'armed']);
      const { owner } = await child.message('ready');

      // What the crash left behind.
      const rowsAfterCrash = await scene.rows(runId);
      expect(rowsAfterCrash.length).toBeLessThanOrEqual(1);
      const found = rowsAfterCrash[0] ?? null;
      const effectsAfterCrash = (await scene.outbox(toolName)).length - before;
      const shape = leftBehind(point);
      expect({
        status: found?.status ?? null,
        watermark: found !== null && found.effectSentAt !== null,
        effects: effectsAfterCrash,
      }).toEqual(shape);
      if (found !== null) expect(found.idempotencyClass).toBe(idempotencyClass);
      // The dead worker still holds the run's lease: nobody released it.
      expect((await scene.stores.runs.get(scene.tenantId, runId))?.leaseOwner).toBe(owner);

      // A fresh worker, arriving after the dead one's lease expired: the sweep, then the API's resubmission.
      const recovery = scene.world(`recovery-${idempotencyClass}-${String(point)}`, { clock: laterClock(CHILD_LEASE_TTL_MS + 1_000) });
      const expected = expectedRecovery(found);
      const report = await recovery.runtime.sweep();
      expect(report).toEqual({ ...expected.sweep, failed: 0, skipped: 0 });
      const submission = scene.submission(runId, [call]);
      const outcome = await recovery.runtime.submitStep(submission);

      const rows = await scene.rows(runId);
      expect(rows).toHaveLength(1);
      const row = rows[0]!;
      expect({ status: row.status, reasonCode: row.reasonCode, attemptNumber: row.attemptNumber }).toEqual({
        status: expected.status,
        reasonCode: expected.reasonCode,
        attemptNumber: expected.attemptNumber,
      });
      expect(outcome.items).toHaveLength(1);
      expect(outcome.items[0]!.outcome).toMatchObject({ status: row.outcomeStatus, reason_code: row.reasonCode });
      // One key for the call, whatever happened to it; the watermark is retained, never rewritten.
      if (found !== null) {
        expect(row.idempotencyKey).toBe(found.idempotencyKey);
        if (found.effectSentAt !== null) expect(row.effectSentAt?.getTime()).toBe(found.effectSentAt.getTime());
      }
      if (found !== null && found.status !== 'running' && found.status !== 'authorized') expect(row).toEqual(found);

      // The effects: every line of this call carries its one key (a replay reuses it), and no class exceeds what it permits.
      const lines = (await scene.outbox(toolName)).slice(before);
      expect(lines).toHaveLength(effectsAfterCrash + expected.addedEffects);
      expect(lines.every((l) => l.key === row.idempotencyKey)).toBe(true);
      expect(lines.length).toBeLessThanOrEqual(MAXIMUM_EFFECTS[idempotencyClass]);
      if (toolName !== 'demo.external_write') {
        // The crash tools record the attempt that produced each effect.
        const attempts = [
          ...(effectsAfterCrash === 1 ? [found!.attemptNumber] : []),
          ...(expected.addedEffects === 1 ? [row.attemptNumber] : []),
        ];
        expect(lines.map((l) => Number(l.rest.split('\t')[0]))).toEqual(attempts);
      }
      // The reference effect: demo.external_write's outbox never holds the same key twice (every case so far).
      const sent = (await scene.outbox('demo.external_write')).map((l) => l.key);
      expect(new Set(sent).size).toBe(sent.length);

      // One terminal event for the call, whoever wrote it.
      const events = await scene.eventsOf(runId, row.id);
      expect(events.filter((e) => TERMINAL_EVENTS.has(e.type))).toHaveLength(1);
      // The step ended, and resubmitting it again changes nothing.
      expect((await scene.stores.steps.get(scene.tenantId, runId, 1))?.status).toBe('completed');
      const again = await scene.api.runtime.submitStep(submission);
      expect(JSON.stringify(again.items)).toBe(JSON.stringify(outcome.items));
      expect((await scene.outbox(toolName)).length).toBe(before + lines.length);
      expect(await scene.rows(runId)).toEqual([row]);

      const path =
        found === null
          ? 'no row: executed once'
          : found.status === 'authorized'
            ? 'authorized: executed once'
            : found.status === 'running'
              ? decideRecovery(found.idempotencyClass, found.effectSentAt)
              : 'recorded outcome';
      matrix.push(
        `${idempotencyClass}@${String(point)} -> ${path}, ${row.status} (${Math.round(crashMs)}+${Math.round(performance.now() - caseStarted - crashMs)} ms)`,
      );
    },
  );
});
