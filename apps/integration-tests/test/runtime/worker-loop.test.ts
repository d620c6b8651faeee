import { ConfigurationError, StoreError } from '@veetbot/domain';
import type { PendingStep, StepQueue, Stores } from '@veetbot/ports';
import { createStepQueue, type DatabaseStepQueue } from '@veetbot/store-postgres';
import { afterEach, describe, expect, it } from 'vitest';
import {
  fromStoredBatch,
  type QueuedStepResult,
  RuntimeError,
  toStoredBatch,
  type Runtime,
  WorkerLoop,
  type StepOutcome,
  type StepSubmission,
  type SweepReport,
  type WorkerLoopEvent,
  type WorkerLoopSettings,
} from '@veetbot/runtime';
import { drivers } from '../../src';
import { callOf, gate, principalOf, tool, useHarness, type Harness } from './fixtures';

/**
 * The worker loop over the real stores and the real step queue (observed, below), a scripted
 * runtime, and once the real Runtime. Timing assertions use a poll interval far above what a
 * wake-up should take, so "fast" cannot be the poll. The queue claims across tenants (§
 * Processes), so after each test its runs are cancelled: their leftover pending steps are
 * never claimable again (a claim takes steps of running runs only).
 */

/**
 * The real step queue on the test's database, observed: claims are counted, the next
 * `failClaims` claims fail as a lost connection would, and every step whose waiter was woken
 * is recorded. Everything else is the real queue's (LISTEN/NOTIFY, FOR UPDATE SKIP LOCKED).
 */
class ObservedQueue implements StepQueue {
  readonly done: PendingStep[] = [];
  claims = 0;
  failClaims = 0;
  /** The limit of every claim, in order. */
  readonly limits: number[] = [];
  constructor(private readonly queue: DatabaseStepQueue) {}

  notify(step: PendingStep): Promise<void> {
    return this.queue.notify(step);
  }
  async notifyDone(step: PendingStep): Promise<void> {
    this.done.push(step);
    await this.queue.notifyDone(step);
  }
  async claimPending(limit: number, now: Date): Promise<PendingStep[]> {
    this.claims += 1;
    this.limits.push(limit);
    if (this.failClaims > 0) {
      this.failClaims -= 1;
      throw new StoreError('store.connection', 'The database could not be reached.');
    }
    return this.queue.claimPending(limit, now);
  }
  waitForWork(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.queue.waitForWork(timeoutMs, signal);
  }
  waitForStep(): Promise<void> {
    throw new Error('the worker never waits for a step');
  }
  /** The api's side of the queue: resolves when the step's done notification arrives (or after `timeoutMs`). */
  waiter(step: PendingStep, timeoutMs: number): Promise<void> {
    return this.queue.waitForStep(step, timeoutMs);
  }
}

const outcomeOf = (s: StepSubmission): StepOutcome => ({
  stepNumber: s.stepNumber,
  items: [],
  pendingApprovals: [],
  suspended: [],
  mode: 'sequential',
  synthesisOnly: false,
  runFailed: null,
});
const emptySweep: SweepReport = { examined: 0, recovered: 0, uncertain: 0, failed: 0, skipped: 0 };

/**
 * A runtime whose submitQueuedStep does what each test says; every submission is recorded. Asked to
 * (the worker loop's `notifyDone`), a step that returns sends its done notification, as the real
 * runtime's finish does in its own commit (docs/adr/0049).
 */
class ScriptedRuntime {
  readonly submissions: StepSubmission[] = [];
  inFlight = 0;
  peak = 0;
  sweeps = 0;
  onSubmit: (s: StepSubmission) => Promise<StepOutcome> = async (s) => outcomeOf(s);
  onSweep: () => Promise<SweepReport> = async () => emptySweep;
  constructor(
    private readonly stores: Stores,
    private readonly queue: StepQueue,
  ) {}

  /** As the real runtime's: the stored step read, passed over when completed or unreadable, else run. */
  async submitQueuedStep(step: PendingStep, options?: { notifyDone?: boolean }): Promise<QueuedStepResult> {
    const stored = await this.stores.steps.get(step.tenantId, step.runId, step.stepNumber);
    if (stored === null) throw new RuntimeError('runtime.run_not_found', 'No such run.');
    if (stored.status === 'completed') return { kind: 'completed' };
    const read = fromStoredBatch(stored.batch);
    if (read.batch === null) return { kind: 'unreadable', error: read.error };
    const s: StepSubmission = { ...step, ...read.batch };
    this.submissions.push(s);
    this.inFlight += 1;
    this.peak = Math.max(this.peak, this.inFlight);
    try {
      const outcome = await this.onSubmit(s);
      await this.stores.steps.setStatus(s.tenantId, s.runId, s.stepNumber, 'completed');
      if (options?.notifyDone === true) await this.queue.notifyDone(step);
      return { kind: 'ran', outcome, traceContext: null };
    } finally {
      this.inFlight -= 1;
    }
  }
  async sweep(): Promise<SweepReport> {
    this.sweeps += 1;
    return this.onSweep();
  }
}

let createdAt = Date.parse('2026-01-01T00:00:00Z');

async function storeStep(h: Harness, runId: string, stepNumber: number, batch?: unknown): Promise<PendingStep> {
  const { tenantId } = h;
  const submission: StepSubmission = {
    tenantId,
    runId,
    stepNumber,
    principal: principalOf(tenantId),
    calls: [callOf(`c${stepNumber}`, 'demo.read', { n: stepNumber })],
  };
  createdAt += 1;
  await h.stores.steps.insert(tenantId, { runId, stepNumber, batch: batch ?? toStoredBatch(submission), createdAt: new Date(createdAt) });
  return { tenantId, runId, stepNumber };
}

const loops: WorkerLoop[] = [];
function loopOf(deps: {
  runtime: Pick<Runtime, 'submitQueuedStep' | 'sweep'>;
  stores: Stores;
  queue: StepQueue;
  settings?: Partial<WorkerLoopSettings>;
}) {
  const events: WorkerLoopEvent[] = [];
  const loop = new WorkerLoop({
    runtime: deps.runtime,
    queue: deps.queue,
    clock: { now: () => new Date() },
    settings: { pollIntervalMs: 10_000, sweepIntervalMs: 60_000, ...deps.settings },
    onEvent: (e) => events.push(e),
  });
  loops.push(loop);
  return { loop, events };
}

/**
 * Waits for `condition`; resolves with how long it took. The default bound is generous: every
 * claim is a database round trip now (a loaded CI machine runs them slowly), and the tests that
 * make a claim about speed assert the time this returns.
 */
async function until(condition: () => boolean, withinMs = 10_000): Promise<number> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > withinMs) throw new Error(`condition not met within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return performance.now() - started;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(drivers())('WorkerLoop on %s', (driver) => {
  const harness = useHarness(driver);
  const queues: DatabaseStepQueue[] = [];
  const runs: { h: Harness; runId: string }[] = [];

  afterEach(async () => {
    // Loops first (they use the queues), then the queues; then every run of the test ends, so
    // no step it left pending is claimed by the next test's loop.
    await Promise.all(loops.splice(0).map((l) => l.stop({ drainMs: 1000 })));
    for (const queue of queues.splice(0)) await queue.close();
    for (const { h, runId } of runs.splice(0)) {
      if ((await h.stores.runs.get(h.tenantId, runId))?.status === 'running')
        await h.stores.runs.setStatus(h.tenantId, runId, 'cancelled', h.clock.now());
    }
  });

  async function queueOf(h: Harness): Promise<ObservedQueue> {
    const queue = await createStepQueue(h.database.database);
    queues.push(queue);
    return new ObservedQueue(queue);
  }

  /** A running run of this test (its steps need one: steps.run_id references runs). */
  async function runOf(h: Harness): Promise<string> {
    const { runId } = await h.open();
    runs.push({ h, runId });
    return runId;
  }

  /** For a scripted runtime: the stores of a fresh tenant, an observed queue and one run. */
  async function scripted() {
    const h = await harness({ tools: [] });
    return { h, stores: h.stores, queue: await queueOf(h), r1: await runOf(h) };
  }

  /** A started loop whose scripted runtime holds the one stored step until `g` is released. */
  async function oneHeldStep(settings: Partial<WorkerLoopSettings>) {
    const { h, stores, queue, r1 } = await scripted();
    const runtime = new ScriptedRuntime(stores, queue);
    const g = gate();
    runtime.onSubmit = async (s) => {
      await g.wait;
      return outcomeOf(s);
    };
    const { loop } = loopOf({ runtime, stores, queue, settings });
    await storeStep(h, r1, 1);
    loop.start();
    await until(() => runtime.submissions.length === 1);
    return { h, queue, r1, runtime, g, loop };
  }

  it('runs a step stored the way the api stores it, through the real runtime, and wakes the waiter', async () => {
    const executed: unknown[] = [];
    const h = await harness({
      tools: [
        tool({ name: 'demo.read' }, async (args) => {
          executed.push(args);
          return { ok: true, content: [{ type: 'text', text: 'read' }] };
        }),
      ],
    });
    const queue = await queueOf(h);
    const { loop, events } = loopOf({ runtime: h.runtime, stores: h.stores, queue });
    loop.start();
    const runId = await runOf(h);
    const step = await storeStep(h, runId, 1);
    // The api's wait, armed before the worker is woken; the step's finish wakes it in its own
    // commit (docs/adr/0049), so the loop sends no second notification.
    const started = performance.now();
    const woken = queue.waiter(step, 5000);
    await queue.notify(step);
    await woken;
    // The poll interval is 10 s and the wait's bound 5 s: waking well inside both is the notification's doing.
    expect(performance.now() - started).toBeLessThan(2000);
    await until(() => events.some((e) => e.kind === 'step_ran'));
    expect(queue.done).toEqual([]);
    expect(executed).toEqual([{ n: 1 }]);
    expect((await h.stores.steps.get(h.tenantId, runId, 1))?.status).toBe('completed');
    const ran = events.find((e) => e.kind === 'step_ran');
    expect(ran?.kind === 'step_ran' && ran.outcome.items.map((i) => [i.call_id, i.outcome.status])).toEqual([['c1', 'succeeded']]);
    const rows = await h.stores.invocations.listForRun(h.tenantId, runId);
    expect(rows.map((r) => [r.callId, r.status])).toEqual([['c1', 'succeeded']]);
  });

  it('runs at most `concurrency` steps at once, one per run, and starts the next as soon as one ends', async () => {
    const { h, stores, queue, r1 } = await scripted();
    const runtime = new ScriptedRuntime(stores, queue);
    const gates = new Map<string, ReturnType<typeof gate>>();
    runtime.onSubmit = async (s) => {
      const g = gate();
      gates.set(`${s.runId}/${s.stepNumber}`, g);
      await g.wait;
      return outcomeOf(s);
    };
    const { loop } = loopOf({ runtime, stores, queue, settings: { concurrency: 2 } });
    const r2 = await runOf(h);
    const r3 = await runOf(h);
    const name = (runId: string) => ({ [r1]: 'r1', [r2]: 'r2', [r3]: 'r3' })[runId];
    for (const run of [r1, r2, r3]) await storeStep(h, run, 1);
    await storeStep(h, r1, 2);
    loop.start();
    await until(() => runtime.submissions.length === 2);
    await pause(50);
    // The two oldest steps took the two slots. Each reads its step before it is submitted, and
    // on a pooled database those reads race: the order of the two submissions is the database's.
    expect(runtime.submissions.map((s) => `${name(s.runId)}/${s.stepNumber}`).sort()).toEqual(['r1/1', 'r2/1']);
    expect(loop.inFlight).toBe(2);
    // r1/1 ends: the slot goes to the oldest claimable step (r3/1 was stored before r1/2), at
    // once, not after the 10 s poll interval.
    gates.get(`${r1}/1`)?.release();
    const took = await until(() => runtime.submissions.length === 3);
    expect(took).toBeLessThan(2000);
    expect(runtime.submissions[2]?.runId).toBe(r3);
    gates.get(`${r2}/1`)?.release();
    await until(() => runtime.submissions.length === 4);
    expect(`${name(runtime.submissions[3]?.runId ?? '')}/${runtime.submissions[3]?.stepNumber}`).toBe('r1/2');
    gates.get(`${r3}/1`)?.release();
    gates.get(`${r1}/2`)?.release();
    await until(() => queue.done.length === 4);
    expect(runtime.peak).toBe(2);
  });

  it('never runs two steps of one run at once in this process', async () => {
    const { h, stores, queue, r1 } = await scripted();
    const runtime = new ScriptedRuntime(stores, queue);
    const running = new Set<string>();
    let overlap = false;
    runtime.onSubmit = async (s) => {
      if (running.has(s.runId)) overlap = true;
      running.add(s.runId);
      await pause(30);
      running.delete(s.runId);
      return outcomeOf(s);
    };
    const { loop } = loopOf({ runtime, stores, queue, settings: { concurrency: 4 } });
    for (let n = 1; n <= 3; n += 1) await storeStep(h, r1, n);
    loop.start();
    await until(() => queue.done.length === 3);
    expect(overlap).toBe(false);
    expect(runtime.submissions.map((s) => s.stepNumber)).toEqual([1, 2, 3]);
  });

  it('leaves a busy run for later: retried after the poll interval, never in a tight loop', async () => {
    const { h, stores, queue, r1 } = await scripted();
    const runtime = new ScriptedRuntime(stores, queue);
    let busy = 3;
    runtime.onSubmit = async (s) => {
      if (busy > 0) {
        busy -= 1;
        throw new RuntimeError('runtime.run_busy', 'busy');
      }
      return outcomeOf(s);
    };
    const { loop, events } = loopOf({ runtime, stores, queue, settings: { pollIntervalMs: 100, maximumRetryDelayMs: 150 } });
    const step = await storeStep(h, r1, 1);
    loop.start();
    await pause(90);
    // One attempt, then deferred: the loop does not spin on it.
    expect(runtime.submissions).toHaveLength(1);
    expect(queue.claims).toBeLessThanOrEqual(3);
    await until(() => queue.done.length === 1, 3000);
    expect(runtime.submissions).toHaveLength(4);
    expect(events.filter((e) => e.kind === 'step_busy')).toHaveLength(3);
    // A busy run is not "done": the waiter is woken only when the step ran.
    expect(queue.done).toEqual([step]);
  });

  it('steps found busy and finished by another worker stop widening later claims (docs/adr/0070)', async () => {
    const { h, stores, queue } = await scripted();
    const runtime = new ScriptedRuntime(stores, queue);
    // Every step is busy here: another worker holds its run, and finishes it.
    runtime.onSubmit = async (s) => {
      await stores.steps.setStatus(s.tenantId, s.runId, s.stepNumber, 'completed');
      throw new RuntimeError('runtime.run_busy', 'Another worker holds this run right now; retry shortly.');
    };
    const { loop, events } = loopOf({ runtime, stores, queue, settings: { pollIntervalMs: 20, maximumRetryDelayMs: 50, concurrency: 2 } });
    for (let i = 0; i < 12; i += 1) await storeStep(h, await runOf(h), 1);
    loop.start();
    await until(() => events.filter((e) => e.kind === 'step_busy').length === 12);
    // Past every deferral and the longest delay: nothing is left to pass over.
    await pause(200);
    const claimsBefore = queue.claims;
    await until(() => queue.claims > claimsBefore + 2);
    expect(Math.max(...queue.limits.slice(claimsBefore))).toBe(2);
  });

  it('a refused step wakes the waiter and is not retried before its delay', async () => {
    const { h, stores, queue, r1 } = await scripted();
    const runtime = new ScriptedRuntime(stores, queue);
    runtime.onSubmit = async () => {
      throw new RuntimeError('runtime.run_not_active', 'The run is not running.');
    };
    const { loop, events } = loopOf({ runtime, stores, queue, settings: { pollIntervalMs: 40 } });
    const step = await storeStep(h, r1, 1);
    loop.start();
    await until(() => queue.done.length === 1);
    expect(queue.done).toEqual([step]);
    const refused = events.find((e) => e.kind === 'step_refused');
    expect(refused?.kind === 'step_refused' && refused.error.code).toBe('runtime.run_not_active');
    // Retries back off: 40, 80, 160, ... ms, so in 300 ms there are at most four more tries.
    await pause(300);
    expect(runtime.submissions.length).toBeGreaterThanOrEqual(2);
    expect(runtime.submissions.length).toBeLessThanOrEqual(5);
  });

  it('an infrastructure failure is reported and the step retried; the waiter is not woken by it', async () => {
    const { h, stores, queue, r1 } = await scripted();
    const runtime = new ScriptedRuntime(stores, queue);
    let failures = 1;
    runtime.onSubmit = async (s) => {
      if (failures-- > 0) throw new StoreError('store.connection', 'The database connection failed.');
      return outcomeOf(s);
    };
    const { loop, events } = loopOf({ runtime, stores, queue, settings: { pollIntervalMs: 50 } });
    await storeStep(h, r1, 1);
    loop.start();
    // The done notification is sent by the step's finish, before the loop reports the step ran.
    await until(() => queue.done.length === 1 && events.some((e) => e.kind === 'step_ran'));
    expect(runtime.submissions).toHaveLength(2);
    expect(events.map((e) => e.kind).filter((k) => k.startsWith('step_'))).toEqual(['step_failed', 'step_ran']);
  });

  it('an unreadable batch is reported, never submitted; a completed step is passed over', async () => {
    const { h, stores, queue, r1 } = await scripted();
    const runtime = new ScriptedRuntime(stores, queue);
    const { loop, events } = loopOf({ runtime, stores, queue, settings: { pollIntervalMs: 30 } });
    const bad = await storeStep(h, r1, 1, { version: 2, calls: 'nope' });
    loop.start();
    await until(() => events.some((e) => e.kind === 'step_unreadable'));
    await pause(100);
    expect(runtime.submissions).toEqual([]);
    // Deferred for the longest delay: one report, not one per poll.
    expect(events.filter((e) => e.kind === 'step_unreadable')).toEqual([expect.objectContaining({ step: bad })]);
  });

  it('a claim that fails is reported and the loop carries on', async () => {
    const { h, stores, queue, r1 } = await scripted();
    const runtime = new ScriptedRuntime(stores, queue);
    queue.failClaims = 2;
    const { loop, events } = loopOf({ runtime, stores, queue, settings: { pollIntervalMs: 30 } });
    await storeStep(h, r1, 1);
    loop.start();
    await until(() => queue.done.length === 1);
    expect(events.filter((e) => e.kind === 'claim_failed')).toHaveLength(2);
  });

  it('runs the sweep at start and on its interval; a failed sweep is reported and the next one still runs', async () => {
    const { stores, queue } = await scripted();
    const runtime = new ScriptedRuntime(stores, queue);
    let calls = 0;
    runtime.onSweep = async () => {
      calls += 1;
      if (calls === 2) throw new StoreError('store.connection', 'down');
      return { ...emptySweep, examined: calls };
    };
    const { loop, events } = loopOf({ runtime, stores, queue, settings: { sweepIntervalMs: 40 } });
    loop.start();
    await until(() => runtime.sweeps >= 4);
    const kinds = events.filter((e) => e.kind.startsWith('sweep')).map((e) => e.kind);
    expect(kinds.slice(0, 3)).toEqual(['sweep_ran', 'sweep_failed', 'sweep_ran']);
  });

  it('stop stops claiming and waits for the batch in flight to finish', async () => {
    const { h, queue, r1, runtime, g, loop } = await oneHeldStep({ pollIntervalMs: 20 });
    let stopped = false;
    const stopping = loop.stop({ drainMs: 5000 }).then((report) => {
      stopped = true;
      return report;
    });
    const claimsAtStop = queue.claims;
    await queue.notify(await storeStep(h, await runOf(h), 1));
    await pause(100);
    expect(stopped).toBe(false);
    expect(queue.claims).toBe(claimsAtStop);
    g.release();
    expect(await stopping).toEqual({ drained: true, abandoned: 0 });
    // The drained batch finished its work, including waking the api's waiter.
    expect(queue.done.map((s) => s.runId)).toEqual([r1]);
    expect(runtime.submissions.map((s) => s.runId)).toEqual([r1]);
    // Idempotent, and the loop cannot be restarted.
    expect(await loop.stop()).toEqual({ drained: true, abandoned: 0 });
    expect(() => loop.start()).toThrow();
  });

  it('stop gives up after drainMs and reports what it abandoned', async () => {
    const { g, loop } = await oneHeldStep({});
    const started = performance.now();
    expect(await loop.stop({ drainMs: 100 })).toEqual({ drained: false, abandoned: 1 });
    expect(performance.now() - started).toBeLessThan(1000);
    g.release();
  });

  it('refuses settings that are not positive integers', async () => {
    const { stores, queue } = await scripted();
    const make = (settings: Partial<WorkerLoopSettings>) => () =>
      loopOf({ runtime: new ScriptedRuntime(stores, queue), stores, queue, settings });
    expect(make({ concurrency: 0 })).toThrow(ConfigurationError);
    expect(make({ pollIntervalMs: 1.5 })).toThrow(/pollIntervalMs/);
    const { loop } = make({ concurrency: 3 })();
    expect(loop.settings).toMatchObject({ concurrency: 3, pollIntervalMs: 10_000 });
  });
});
