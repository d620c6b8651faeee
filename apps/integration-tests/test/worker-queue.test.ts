import type { PendingStep, StepQueue } from '@veetbot/ports';
import { toStoredBatch, WorkerLoop, type Runtime, type StepSubmission, type WorkerLoopEvent } from '@veetbot/runtime';
import {
  createApiStores,
  createStepQueue,
  createStores,
  openDatabase,
  type Database,
  type DatabaseStepQueue,
} from '@veetbot/store-postgres';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { drivers, openTestDatabase, type TestDatabase } from '../src';
import { neverReleases, openRuntimeScene, userCall, WorkerDied, type RuntimeScene } from './runtime-harness';

/**
 * The seam between the api and the worker (ports/step-queue.ts) on a real database: the api
 * inserts a step's batch as a `pending` row and notifies; a WorkerLoop claims it (FOR UPDATE
 * SKIP LOCKED), runs it under the run's lease and wakes the api's waiter. Every "fast"
 * assertion runs with a 10 s poll interval, so only a notification can explain it.
 */
const POLL_MS = 10_000;

/** The slice of node-postgres' pool this file uses (pg itself belongs to store-postgres). */
interface RawPool {
  connect(): Promise<{ query<R>(text: string, values?: unknown[]): Promise<{ rows: R[] }>; release(): void }>;
}

describe.each(drivers())('worker queue on %s', (driver) => {
  let database: TestDatabase;
  let scene: RuntimeScene;
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    database = await openTestDatabase(driver);
  });
  afterAll(async () => {
    await database.close();
  });
  beforeEach(async () => {
    scene = await openRuntimeScene(database);
  });
  afterEach(async () => {
    // Loops first (they use the queues), then queues, then extra database handles.
    for (const cleanup of cleanups.splice(0)) await cleanup();
    await scene.close();
  });

  async function queueOn(db: Database = database.database): Promise<DatabaseStepQueue> {
    const queue = await createStepQueue(db);
    cleanups.push(() => queue.close());
    return queue;
  }

  function startLoop(runtime: Runtime, queue: DatabaseStepQueue, events: WorkerLoopEvent[] = []): WorkerLoop {
    const loop = new WorkerLoop({
      runtime,
      queue,
      clock: scene.clock,
      settings: { pollIntervalMs: POLL_MS, sweepIntervalMs: 60_000 },
      onEvent: (e) => events.push(e),
    });
    loop.start();
    cleanups.unshift(() => loop.stop({ drainMs: 10_000 }));
    return loop;
  }

  /** What the api does: store the batch as a pending step, then wake a worker. */
  async function submitThroughQueue(api: DatabaseStepQueue, submission: StepSubmission): Promise<PendingStep> {
    const inserted = await scene.stores.steps.insert(submission.tenantId, {
      runId: submission.runId,
      stepNumber: submission.stepNumber,
      batch: toStoredBatch(submission),
      createdAt: scene.clock.now(),
    });
    expect(inserted.inserted && inserted.row.status).toBe('pending');
    const step = { tenantId: submission.tenantId, runId: submission.runId, stepNumber: submission.stepNumber };
    await api.notify(step);
    return step;
  }

  it('a step the api stored is claimed, run and completed; LISTEN/NOTIFY wakes the worker and then the api, far inside the poll interval', async () => {
    const api = await queueOn();
    const workerQueue = await queueOn();
    const events: WorkerLoopEvent[] = [];
    startLoop(scene.worker('worker-1'), workerQueue, events);
    // Let the loop make its first (empty) claim and settle into waiting.
    await new Promise((r) => setTimeout(r, 300));

    const { runId } = await scene.openRun();
    const submission = scene.step(runId, 1, [
      userCall('w', 'demo.external_write', { line: 'from the queue' }),
      userCall('m', 'math.evaluate', { expression: '6 * 7' }),
    ]);
    const step = { tenantId: scene.tenantId, runId, stepNumber: 1 };
    const started = performance.now();
    // The api listens before it submits, as its bounded wait will.
    const done = api.waitForStep(step, POLL_MS * 2);
    await submitThroughQueue(api, submission);
    await done;
    const took = performance.now() - started;
    expect(took).toBeLessThan(POLL_MS / 2);

    expect((await scene.stores.steps.get(scene.tenantId, runId, 1))?.status).toBe('completed');
    const rows = await scene.stores.invocations.listForRun(scene.tenantId, runId);
    expect(rows.map((r) => [r.callId, r.status]).sort()).toEqual([
      ['m', 'succeeded'],
      ['w', 'succeeded'],
    ]);
    expect(await scene.outboxLines()).toHaveLength(1);
    // The lease went back when the batch ended.
    expect((await scene.stores.runs.get(scene.tenantId, runId))?.leaseOwner).toBeNull();
    const ran = events.filter((e) => e.kind === 'step_ran');
    expect(ran).toHaveLength(1);
    expect(ran[0]?.kind === 'step_ran' && ran[0].outcome.items.map((i) => i.outcome.status)).toEqual(['succeeded', 'succeeded']);
  });

  it('two workers, each with its own runtime, queue and connection pool, never run a call twice', async () => {
    // A second handle on the same database: on PostgreSQL its own pool (another process, as
    // far as the server can tell); PGlite is one process, so both loops share the one handle.
    let secondDb = database.database;
    let secondStores = scene.stores;
    if (database.url !== null) {
      secondDb = await openDatabase({ url: database.url, poolSize: 6 });
      secondStores = createStores(secondDb);
      const db = secondDb;
      cleanups.push(() => db.close());
    }
    const api = await queueOn();
    const events: WorkerLoopEvent[][] = [[], []];
    startLoop(scene.worker('worker-a'), await queueOn(), events[0]);
    startLoop(scene.worker('worker-b', { stores: secondStores }), await queueOn(secondDb), events[1]);

    const steps: PendingStep[] = [];
    let calls = 0;
    for (let r = 0; r < 6; r += 1) {
      const { runId } = await scene.openRun();
      const batch = Array.from({ length: 3 }, (_, i) => userCall(`c${i}`, 'demo.external_write', { line: `run ${r} call ${i}` }));
      calls += batch.length;
      steps.push(await submitThroughQueue(api, scene.step(runId, 1, batch)));
    }
    await Promise.all(
      steps.map(async (step) => {
        const deadline = performance.now() + 30_000;
        while ((await scene.stores.steps.get(step.tenantId, step.runId, step.stepNumber))?.status !== 'completed') {
          if (performance.now() > deadline) throw new Error(`step of run ${step.runId} did not complete`);
          await api.waitForStep(step, 500);
        }
      }),
    );

    const lines = await scene.outboxLines();
    expect(lines).toHaveLength(calls);
    expect(new Set(lines).size).toBe(calls);
    for (const step of steps) {
      const rows = await scene.stores.invocations.listForRun(step.tenantId, step.runId);
      expect(rows.map((r) => [r.callId, r.status, r.attemptNumber]).sort()).toEqual([
        ['c0', 'succeeded', 1],
        ['c1', 'succeeded', 1],
        ['c2', 'succeeded', 1],
      ]);
    }
    const ran = events.flat().filter((e) => e.kind === 'step_ran').length;
    expect(ran).toBeGreaterThanOrEqual(steps.length);
  });

  it('a running step left by a worker that died mid-batch is claimed again and its remaining calls run once', async () => {
    const api = await queueOn();
    const { runId } = await scene.openRun();
    const submission = scene.step(runId, 1, [
      userCall('first', 'demo.external_write', { line: 'before the crash' }),
      userCall('second', 'demo.external_write', { line: 'after the crash' }),
    ]);
    const step = await submitThroughQueue(api, submission);
    // The dead worker: it ran the first call and died as the second began (before its row
    // existed), holding the lease — a dead process never releases it.
    let starts = 0;
    const dying = scene.worker('worker-dead', {
      stores: neverReleases(scene.stores),
      hooks: {
        onStep: (n) => {
          if (n === 1 && ++starts === 2) throw new WorkerDied(1);
        },
      },
    });
    await expect(dying.submitStep(submission)).rejects.toBeInstanceOf(WorkerDied);
    expect((await scene.stores.steps.get(scene.tenantId, runId, 1))?.status).toBe('running');
    expect((await scene.stores.runs.get(scene.tenantId, runId))?.leaseOwner).toBe('worker-dead');
    const linesBefore = await scene.outboxLines();

    const events: WorkerLoopEvent[] = [];
    const workerQueue = await queueOn();
    startLoop(scene.worker('worker-next'), workerQueue, events);
    // While the dead worker's lease is live, nobody takes the step.
    await new Promise((r) => setTimeout(r, 300));
    expect((await scene.stores.steps.get(scene.tenantId, runId, 1))?.status).toBe('running');
    // The lease expires; a wake-up (or the poll) brings the step back.
    scene.clock.advance(31_000);
    const done = api.waitForStep(step, POLL_MS * 2);
    await api.notify(step);
    await done;
    expect((await scene.stores.steps.get(scene.tenantId, runId, 1))?.status).toBe('completed');
    const rows = await scene.stores.invocations.listForRun(scene.tenantId, runId);
    expect(rows.map((r) => [r.callId, r.status]).sort()).toEqual([
      ['first', 'succeeded'],
      ['second', 'succeeded'],
    ]);
    // The first call was not run again; the second ran once.
    expect(linesBefore).toHaveLength(1);
    expect(await scene.outboxLines()).toHaveLength(2);
  });

  /** What the api does since docs/adr/0076: one statement, whose commit wakes the workers. */
  async function submitAsTheApi(submission: StepSubmission): Promise<PendingStep> {
    const stored = await createApiStores(database.database).stepSubmissions.submit(submission.tenantId, {
      runId: submission.runId,
      stepNumber: submission.stepNumber,
      batch: toStoredBatch(submission),
      createdAt: scene.clock.now(),
    });
    expect(stored.inserted && stored.step?.status).toBe('pending');
    return { tenantId: submission.tenantId, runId: submission.runId, stepNumber: submission.stepNumber };
  }

  /** veetbot_submit_step in a transaction that is rolled back, on the driver's own connection. */
  async function submitRolledBack(submission: StepSubmission): Promise<void> {
    const text = 'select veetbot_submit_step($1::text, $2::uuid, $3::integer, $4::jsonb, $5::timestamptz) as result';
    const values = [
      submission.tenantId,
      submission.runId,
      submission.stepNumber,
      JSON.stringify(toStoredBatch(submission)),
      scene.clock.now().toISOString(),
    ];
    const native = database.database.native;
    if (native.driver === 'postgres') {
      const { pool } = native as unknown as { pool: RawPool };
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const [row] = (await client.query<{ result: { inserted: boolean } }>(text, values)).rows;
        expect(row?.result.inserted).toBe(true);
        await client.query('ROLLBACK');
      } finally {
        client.release();
      }
      return;
    }
    await database.database.exclusive(() =>
      native.client.transaction(async (tx) => {
        const [row] = (await tx.query<{ result: { inserted: boolean } }>(text, values)).rows;
        expect(row?.result.inserted).toBe(true);
        await tx.rollback();
      }),
    );
  }

  /**
   * Whether a wake-up for work reached `queue` before a sentinel notification sent now:
   * notifications arrive in commit order on the one listening connection, so one sent by an
   * earlier commit has been delivered once the sentinel has (no timer decides).
   */
  async function wokenBeforeSentinel(queue: DatabaseStepQueue, sentinel: PendingStep): Promise<boolean> {
    const sentinelArrived = queue.waitForStep(sentinel, 60_000);
    await queue.notifyDone(sentinel);
    await sentinelArrived;
    const stop = new AbortController();
    let woken = false;
    const wait = queue.waitForWork(3_600_000, stop.signal);
    void wait.then(() => {
      woken = true;
    });
    // One turn of the job queue: a wait resolved already (a remembered wake-up) has run its callback.
    await Promise.resolve();
    const remembered = woken;
    stop.abort();
    await wait;
    return remembered;
  }

  it('a submission wakes the workers from its own commit: a rolled-back one notifies nobody, a committed one does (docs/adr/0076)', async () => {
    const listening = await queueOn();
    const { runId } = await scene.openRun();
    const sentinel = { tenantId: scene.tenantId, runId, stepNumber: 99 };
    // Nothing remembered to begin with.
    expect(await wokenBeforeSentinel(listening, sentinel)).toBe(false);

    await submitRolledBack(scene.step(runId, 1, [userCall('m', 'math.evaluate', { expression: '1 + 1' })]));
    expect(await wokenBeforeSentinel(listening, sentinel)).toBe(false);
    expect(await scene.stores.steps.get(scene.tenantId, runId, 1)).toBeNull();

    // The same step committed: its own statement wakes the listener, no notify() by anyone.
    await submitAsTheApi(scene.step(runId, 1, [userCall('m', 'math.evaluate', { expression: '1 + 1' })]));
    expect(await wokenBeforeSentinel(listening, sentinel)).toBe(true);
    // A resubmission inserts nothing and wakes nobody (the api announces a still-open one itself).
    const again = await createApiStores(database.database).stepSubmissions.submit(scene.tenantId, {
      runId,
      stepNumber: 1,
      batch: toStoredBatch(scene.step(runId, 1, [userCall('m', 'math.evaluate', { expression: '1 + 1' })])),
      createdAt: scene.clock.now(),
    });
    expect(again.inserted).toBe(false);
    expect(await wokenBeforeSentinel(listening, sentinel)).toBe(false);

    // Leave the database clean: run the step.
    const workerQueue = await queueOn();
    startLoop(scene.worker('worker-clean'), workerQueue);
    const step = { tenantId: scene.tenantId, runId, stepNumber: 1 };
    while ((await scene.stores.steps.get(scene.tenantId, runId, 1))?.status !== 'completed') await listening.waitForStep(step, 200);
  });

  it.each([
    { claimAfterEveryBatch: false, claims: 2 },
    // With tenant quotas (docs/adr/0070) a batch's end may free a held-back step: one claim more.
    { claimAfterEveryBatch: true, claims: 3 },
  ])(
    'a worker polling once an hour runs a step the api submitted, woken by the submission alone, and claims no more than it must (claim after every batch: $claimAfterEveryBatch)',
    async ({ claimAfterEveryBatch, claims: expectedClaims }) => {
      const workerQueue = await queueOn();
      const api = await queueOn();
      let claims = 0;
      let settled: () => void = () => undefined;
      const waiting = new Promise<void>((resolve) => (settled = resolve));
      // The loop's queue, counting claims and telling when the loop first waits (its first claim done).
      const counted: StepQueue = {
        notify: (s) => workerQueue.notify(s),
        notifyDone: (s) => workerQueue.notifyDone(s),
        claimPending: (limit, now) => {
          claims += 1;
          return workerQueue.claimPending(limit, now);
        },
        waitForWork: (ms, signal) => {
          settled();
          return workerQueue.waitForWork(ms, signal);
        },
        waitForStep: (s, ms, signal) => workerQueue.waitForStep(s, ms, signal),
      };
      const events: WorkerLoopEvent[] = [];
      const loop = new WorkerLoop({
        runtime: scene.worker('worker-hourly'),
        queue: counted,
        clock: scene.clock,
        settings: { pollIntervalMs: 3_600_000, sweepIntervalMs: 3_600_000 },
        onEvent: (e) => events.push(e),
        claimAfterEveryBatch,
      });
      loop.start();
      cleanups.unshift(() => loop.stop({ drainMs: 10_000 }));
      await waiting;
      expect(claims).toBe(1);

      const { runId } = await scene.openRun();
      const step = { tenantId: scene.tenantId, runId, stepNumber: 1 };
      // Armed before the submission, as the steps route arms it.
      const done = api.waitForStep(step, 30_000);
      await submitAsTheApi(scene.step(runId, 1, [userCall('w', 'demo.external_write', { line: 'woken by the commit' })]));
      await done;
      expect((await scene.stores.steps.get(scene.tenantId, runId, 1))?.status).toBe('completed');
      expect(events.filter((e) => e.kind === 'step_ran')).toHaveLength(1);
      // Once at start, once on the wake-up; none after launching a claim that was not full, and at
      // the batch's end only when quotas may hold steps back.
      while (loop.inFlight > 0) await new Promise((r) => setTimeout(r, 10));
      // A claim the batch's end wakes starts within the turns that follow it.
      for (let turn = 0; turn < 5; turn++) await new Promise((r) => setImmediate(r));
      await loop.stop({ drainMs: 10_000 });
      expect(claims).toBe(expectedClaims);
    },
  );

  // PostgreSQL only: PGlite is one connection, so no two claims can ever be open at once there.
  if (driver === 'postgres')
    it('SKIP LOCKED: claims from two workers at the same moment are disjoint', async () => {
      const api = await queueOn();
      const claimer = await queueOn();
      const mine: PendingStep[] = [];
      for (let r = 0; r < 4; r += 1) {
        const { runId } = await scene.openRun();
        mine.push(await submitThroughQueue(api, scene.step(runId, 1, [userCall('m', 'math.evaluate', { expression: '1 + 1' })])));
      }
      const ours = (claims: PendingStep[]) => claims.filter((c) => c.tenantId === scene.tenantId).map((c) => c.runId);
      const { pool } = database.database.native as unknown as { pool: RawPool };
      const other = await pool.connect();
      try {
        // Another worker's claim, mid-transaction: the same role and the same locking read.
        await other.query('BEGIN');
        await other.query(`select set_config('role', 'veetbot_maintenance', true)`);
        const held = await other.query<{ run_id: string }>(
          `select s.run_id from steps s join runs r on r.id = s.run_id and r.tenant_id = s.tenant_id
          where s.tenant_id = $1 and s.status = 'pending' order by s.created_at, s.id limit 2 for update of s skip locked`,
          [scene.tenantId],
        );
        const heldRuns = held.rows.map((r) => r.run_id);
        expect(heldRuns).toHaveLength(2);
        const claimed = ours(await claimer.claimPending(100, scene.clock.now()));
        expect(claimed).toHaveLength(2);
        expect(claimed.filter((id) => heldRuns.includes(id))).toEqual([]);
        await other.query('COMMIT');
        // Released: every step is claimable again (a claim changes nothing).
        expect(new Set(ours(await claimer.claimPending(100, scene.clock.now())))).toEqual(new Set(mine.map((s) => s.runId)));
      } finally {
        other.release();
      }
      // Run them so the database is left clean for the next test.
      startLoop(scene.worker('worker-clean'), claimer);
      for (const step of mine) {
        while ((await scene.stores.steps.get(step.tenantId, step.runId, 1))?.status !== 'completed') await api.waitForStep(step, 200);
      }
    });
});
