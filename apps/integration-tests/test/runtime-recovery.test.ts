import { describe, expect, it } from 'vitest';
import { FencingError, type InvocationStatus } from '@veetbot/domain';
import { drivers } from '../src';
import {
  dieAt,
  neverReleases,
  RUNTIME_LEASE_TTL_MS,
  useRuntimeScene,
  userCall,
  WorkerDied,
  type RuntimeScene,
  type RuntimeTestTool,
} from './runtime-harness';

/**
 * The recovery sweep on a real database (§ The effect watermark; § Deduplication on the way
 * in, rule 4): a worker dies holding a run's lease and leaves a RUNNING row; once the lease
 * expires another worker's sweep resubmits the call through the pipeline, and the row's own
 * idempotency_class and effect_sent_at decide what happens.
 */

interface Case {
  readonly tool: RuntimeTestTool;
  /** Where the worker dies: at step 10's start nothing ran and no watermark exists; at step 11's start the tool ran after the watermark. */
  readonly watermark: boolean;
  readonly expected: {
    readonly status: InvocationStatus;
    readonly reasonCode: string;
    readonly executions: number;
    readonly report: 'recovered' | 'uncertain';
  };
}

// The recovery table, row by row; "unset" rows crash before the tool ever started.
const CASES: readonly Case[] = [
  { tool: 'demo.rt_read', watermark: false, expected: { status: 'succeeded', reasonCode: 'tool.ok', executions: 1, report: 'recovered' } },
  { tool: 'demo.rt_read', watermark: true, expected: { status: 'succeeded', reasonCode: 'tool.ok', executions: 2, report: 'recovered' } },
  {
    tool: 'demo.rt_idempotent',
    watermark: false,
    expected: { status: 'succeeded', reasonCode: 'tool.ok', executions: 1, report: 'recovered' },
  },
  {
    tool: 'demo.rt_idempotent',
    watermark: true,
    expected: { status: 'succeeded', reasonCode: 'tool.ok', executions: 2, report: 'recovered' },
  },
  {
    tool: 'demo.rt_conditional',
    watermark: false,
    expected: { status: 'succeeded', reasonCode: 'tool.ok', executions: 1, report: 'recovered' },
  },
  {
    tool: 'demo.rt_conditional',
    watermark: true,
    expected: { status: 'succeeded', reasonCode: 'tool.ok', executions: 2, report: 'recovered' },
  },
  {
    tool: 'demo.rt_non_idempotent',
    watermark: false,
    expected: { status: 'succeeded', reasonCode: 'tool.ok', executions: 1, report: 'recovered' },
  },
  {
    tool: 'demo.rt_non_idempotent',
    watermark: true,
    expected: { status: 'uncertain', reasonCode: 'tool.outcome_unknown', executions: 1, report: 'uncertain' },
  },
];

/** Worker A takes the run and dies at `step` without releasing its lease, leaving the call RUNNING. */
async function deadWorker(s: RuntimeScene, runId: string, toolName: string, step: 10 | 11, stepNumber = 1): Promise<void> {
  const workerA = s.worker('worker-a', { hooks: dieAt(step), stores: neverReleases(s.stores) });
  await expect(
    workerA.submitStep(s.step(runId, stepNumber, [userCall(`call-${stepNumber}`, toolName, { n: stepNumber })])),
  ).rejects.toBeInstanceOf(WorkerDied);
}

describe.each(drivers())('runtime recovery sweep on %s', (driver) => {
  const scene = useRuntimeScene(driver);

  it.each(CASES)('$tool with the watermark $watermark', async ({ tool, watermark, expected }) => {
    const s = scene();
    const { runId } = await s.openRun();
    await deadWorker(s, runId, tool, watermark ? 11 : 10);
    const [left] = await s.stores.invocations.listForRun(s.tenantId, runId);
    expect(left).toMatchObject({ status: 'running', attemptNumber: 1 });
    expect(left!.effectSentAt !== null).toBe(watermark);

    // The lease is still live: nobody touches the row.
    const sweeper = s.worker('worker-b');
    expect(await sweeper.sweep()).toEqual({ examined: 0, recovered: 0, uncertain: 0, failed: 0, skipped: 0 });

    s.clock.advance(RUNTIME_LEASE_TTL_MS + 1);
    const report = await sweeper.sweep();
    expect(report).toEqual({
      examined: 1,
      recovered: expected.report === 'recovered' ? 1 : 0,
      uncertain: expected.report === 'uncertain' ? 1 : 0,
      failed: 0,
      skipped: 0,
    });

    const row = await s.stores.invocations.getById(s.tenantId, left!.id);
    expect(row).toMatchObject({ status: expected.status, reasonCode: expected.reasonCode, idempotencyKey: left!.idempotencyKey });
    const probe = s.probes[tool];
    expect(probe.executions).toBe(expected.executions);
    // Every execution, first attempt or recovery, saw the one key ("replay with the same key").
    expect(new Set(probe.starts.map((st) => st.context.idempotencyKey))).toEqual(
      new Set(probe.executions > 0 ? [left!.idempotencyKey] : []),
    );
    if (expected.status === 'succeeded') {
      expect(row!.attemptNumber).toBe(2);
      expect(probe.starts.at(-1)!.context.attemptNumber).toBe(2);
    }
    // The watermark is retained, never rewritten.
    if (watermark) expect(row!.effectSentAt?.getTime()).toBe(left!.effectSentAt!.getTime());
    // The step has every call terminal now: it ended.
    expect((await s.stores.steps.get(s.tenantId, runId, 1))?.status).toBe('completed');
    // Nothing is left for the next pass.
    expect((await sweeper.sweep()).examined).toBe(0);
  });

  it('never returns a suspended RUNNING row', async () => {
    const s = scene();
    const { runId } = await s.openRun();
    await deadWorker(s, runId, 'demo.rt_read', 11);
    const [left] = await s.stores.invocations.listForRun(s.tenantId, runId);
    // The control-tool suspension: a suspension marker under a lease, then the lease released.
    const lease = await s.stores.runs.acquireLease(
      s.tenantId,
      runId,
      'control',
      RUNTIME_LEASE_TTL_MS,
      s.clock.advance(RUNTIME_LEASE_TTL_MS + 1),
    );
    const fence = { runId, fencingToken: lease!.fencingToken };
    await s.stores.invocations.suspend(s.tenantId, left!.id, fence, { kind: 'user_input', ref: 'question-1' }, []);
    await s.stores.runs.releaseLease(s.tenantId, fence);
    s.clock.advance(RUNTIME_LEASE_TTL_MS + 1);

    expect(await s.worker('worker-b').sweep()).toEqual({ examined: 0, recovered: 0, uncertain: 0, failed: 0, skipped: 0 });
    expect(await s.stores.invocations.getById(s.tenantId, left!.id)).toMatchObject({
      status: 'running',
      suspendedKind: 'user_input',
      attemptNumber: 1,
    });
  });

  it('ends a call that keeps killing its worker as FAILED tool.recovery_exhausted after maximumAttempts (2)', async () => {
    const s = scene();
    const { runId } = await s.openRun();
    const settings = { maximumAttempts: 2 };
    await deadWorker(s, runId, 'demo.rt_idempotent', 11);
    s.clock.advance(RUNTIME_LEASE_TTL_MS + 1);

    // Attempt 2: the recovering worker dies the same way.
    const second = await s.worker('worker-b', { hooks: dieAt(11), stores: neverReleases(s.stores), settings }).sweep();
    expect(second).toEqual({ examined: 1, recovered: 0, uncertain: 0, failed: 0, skipped: 1 });
    const [row] = await s.stores.invocations.listForRun(s.tenantId, runId);
    expect(row).toMatchObject({ status: 'running', attemptNumber: 2 });

    s.clock.advance(RUNTIME_LEASE_TTL_MS + 1);
    const third = await s.worker('worker-c', { settings }).sweep();
    expect(third).toEqual({ examined: 1, recovered: 0, uncertain: 0, failed: 1, skipped: 0 });
    expect(await s.stores.invocations.getById(s.tenantId, row!.id)).toMatchObject({
      status: 'failed',
      reasonCode: 'tool.recovery_exhausted',
      attemptNumber: 2,
    });
    expect(s.probes['demo.rt_idempotent'].executions).toBe(2);
    const events = await s.stores.events.listAfter(s.tenantId, runId, 0, 1000);
    expect(events.filter((e) => e.type === 'tool.call.failed').map((e) => e.payload.reason_code)).toEqual(['tool.recovery_exhausted']);
  });

  it('refuses a stale worker’s writes once another worker has taken the run (FencingError)', async () => {
    const s = scene();
    const { runId } = await s.openRun();
    const probe = s.probes['demo.rt_read'];
    let releaseA!: () => void;
    const heldA = new Promise<void>((resolve) => {
      releaseA = resolve;
    });
    // Worker A's first call hangs inside the tool; the recovery's call returns at once.
    probe.during = () => (probe.executions === 1 ? heldA : Promise.resolve());
    const stale = s.worker('worker-a').submitStep(s.step(runId, 1, [userCall('slow', 'demo.rt_read', { n: 1 })]));
    while (probe.executions === 0) await new Promise((resolve) => setTimeout(resolve, 5));

    s.clock.advance(RUNTIME_LEASE_TTL_MS + 1);
    expect(await s.worker('worker-b').sweep()).toMatchObject({ examined: 1, recovered: 1 });
    const [recovered] = await s.stores.invocations.listForRun(s.tenantId, runId);
    expect(recovered).toMatchObject({ status: 'succeeded', attemptNumber: 2 });

    releaseA();
    const error = await stale.then(
      () => null,
      (e: unknown) => e,
    );
    expect(FencingError.isInstance(error)).toBe(true);
    // A's late result changed nothing.
    expect(await s.stores.invocations.getById(s.tenantId, recovered!.id)).toEqual(recovered);
    const run = await s.stores.runs.get(s.tenantId, runId);
    expect(run?.leaseOwner).toBeNull();
  });
});
