import { VeetbotClient, type StepOutcome } from '@veetbot/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStores, openDatabase } from '@veetbot/store-postgres';
import { startScene, until, type E2eScene } from '../src/e2e-processes';

/** The embedded default's demo tenant (apps/api/src/embedded/demo-tenant.ts): the e2e scene's key is its key. */
const DEMO_TENANT_ID = 'demo';

/**
 * Two real worker processes sharing one PostgreSQL database and one data folder (so one
 * outbox.log); the one running a sequential batch of non-idempotent external writes is
 * SIGKILLed while a call is in flight. Driven over HTTP; the outbox file is the external system.
 */
const CALLS = 128; // the most one step may hold
const LEASE_TTL_MS = 3_000;
const OUTBOX_ACK_MS = 30;

let scene: E2eScene;

beforeAll(async () => {
  scene = await startScene({
    workers: 0,
    workerEnv: {
      VEETBOT_LEASE_TTL_MS: String(LEASE_TTL_MS),
      VEETBOT_WORKER_SWEEP_MS: '1000',
      // The outbox answers 30 ms after it has taken a line, as a remote system answers after its
      // effect: the window between effect and completion is most of each call, so a pause lands
      // in it within a few tries (docs/adr/0081). Without it the window was well under a
      // millisecond, and about one run in ten caught no call at all.
      VEETBOT_DEMO_OUTBOX_ACK_MS: String(OUTBOX_ACK_MS),
    },
  });
}, 120_000);

afterAll(async () => {
  await scene?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const succeededCount = (outcome: StepOutcome) => outcome.items.filter((i) => i.outcome.status === 'succeeded').length;

describe('two workers, one SIGKILLed mid-batch', () => {
  it('nothing lost, no duplicate outbox line, the in-flight non-idempotent call UNCERTAIN, then settled applied by its reconciler', async () => {
    const [first, second] = [await scene.startWorker(), await scene.startWorker()];
    const client = new VeetbotClient({ baseUrl: scene.baseUrl, apiKey: scene.demoKey });
    const session = await client.openSession({ agent_id: 'kill-test', enabled_tools: ['demo.external_write'] });
    const run = await client.createRun({ session_id: session.id, deadline_seconds: 3_600 });
    const calls = Array.from({ length: CALLS }, (_, i) => ({
      call_id: `w-${i}`,
      tool_name: 'demo.external_write',
      arguments: { line: `kill-test line ${i}` },
      context_trust: ['user' as const],
    }));
    const submitted = await client.submitStep(run.id, { step_number: 1, calls, wait_seconds: 0 });
    expect(submitted.status).toBe(202);
    expect(submitted.location).toBe(`/v1/runs/${run.id}/steps/1`);

    await until(
      () => scene.outboxLines(),
      (lines) => lines.length >= 3,
      60_000,
      'the first effects',
    );
    // Which worker holds the batch: the run's lease owner, `worker-<host>-<pid>-<random>`.
    // (Read, not found by pausing each worker in turn: the other one may finish all 128 calls
    // in the time that takes.)
    const database = await openDatabase({ url: scene.url, poolSize: 1 });
    const owner = await until(
      async () => (await createStores(database).runs.get(DEMO_TENANT_ID, run.id))?.leaseOwner ?? null,
      (o) => o !== null,
      30_000,
      'the run lease',
    ).finally(() => database.close());
    const ownerPid = Number(/-(\d+)-[0-9a-f]+$/.exec(owner ?? '')?.[1]);
    const victim = first.child.pid === ownerPid ? first : second;
    expect(victim.child.pid).toBe(ownerPid);
    const survivor = victim === first ? second : first;

    // Catch the victim between its effect and its completion: paused, the outbox holds one more
    // line than the calls recorded as succeeded. Then SIGKILL: that call was sent, never recorded.
    // The window is the outbox's 30 ms answer plus the victim's own work before it sends the
    // completion; the victim runs in slices of 0–10 ms, so nearly every pause lands in one.
    let inFlightIndex = -1;
    for (let attempt = 0; attempt < 1_000 && inFlightIndex < 0; attempt++) {
      victim.child.kill('SIGSTOP');
      await sleep(50); // queries the victim already sent settle in PostgreSQL
      const lines = (await scene.outboxLines()).length;
      const recorded = succeededCount(await client.getStep(run.id, 1));
      // A completion the victim sent just before the pause can take longer than the settle when
      // the disk stalls a commit (the result is a flushed commit, ADR 0015; under a loaded CI
      // run 150 ms was seen to be too short): look again, a full second later, before calling
      // the call in flight. This costs only the rare pauses that found a line unrecorded.
      let confirmed = lines === recorded + 1 && lines < CALLS;
      if (confirmed) {
        await sleep(1_000);
        confirmed = succeededCount(await client.getStep(run.id, 1)) === recorded;
      }
      if (confirmed) {
        victim.child.kill('SIGKILL');
        inFlightIndex = recorded;
      } else {
        victim.child.kill('SIGCONT');
        await sleep(Math.floor(Math.random() * 10));
      }
    }
    expect(inFlightIndex, 'a call caught in flight').toBeGreaterThanOrEqual(0);
    expect(await victim.exited).toEqual({ code: null, signal: 'SIGKILL' });

    // The survivor takes the batch over once the lease expires and finishes it.
    const settled = await until(
      () => client.getStep(run.id, 1),
      (o) => o.status === 'completed',
      90_000,
      'the batch completed by the survivor',
    );
    expect(survivor.child.exitCode).toBeNull();

    // Nothing lost: every call has a terminal outcome, in call order.
    expect(settled.items.map((i) => i.call_id)).toEqual(calls.map((c) => c.call_id));
    const statuses = settled.items.map((i) => i.outcome.status);
    expect(statuses.every((s) => ['succeeded', 'failed', 'denied', 'uncertain'].includes(s))).toBe(true);
    // The in-flight call is UNCERTAIN (its effect may have happened: never re-sent).
    const inFlight = settled.items[inFlightIndex]!;
    expect(inFlight.call_id).toBe(`w-${inFlightIndex}`);
    expect(inFlight.outcome).toMatchObject({ status: 'uncertain', reason_code: 'tool.outcome_unknown' });
    expect(statuses.filter((s) => s === 'uncertain')).toHaveLength(1);

    // No duplicate outbox line: each line at most once; every succeeded call's line exactly once.
    const lines = await scene.outboxLines();
    expect(new Set(lines).size).toBe(lines.length);
    const lineOf = (i: number) => lines.filter((l) => l.endsWith(`kill-test line ${i}`));
    for (const [i, status] of statuses.entries()) {
      if (status === 'succeeded') expect(lineOf(i), `line ${i}`).toHaveLength(1);
      if (status === 'uncertain') expect(lineOf(i).length, `line ${i}`).toBe(1); // it was sent before the kill
      if (status === 'failed' || status === 'denied') expect(lineOf(i), `line ${i}`).toHaveLength(0);
    }

    // Over HTTP: the row stays UNCERTAIN (what the system knew), and the survivor's sweep settles
    // it — its line is in the outbox, so the reconciler answers applied (docs/adr/0063) and the
    // call never waits in the review queue for a person.
    const rows = await client.listInvocations({ run_id: run.id, status: 'uncertain' });
    expect(rows.invocations).toHaveLength(1);
    expect(rows.invocations[0]).toMatchObject({ call_id: `w-${inFlightIndex}`, status: 'uncertain', effect_sent_at: expect.any(String) });
    const reviewed = await until(
      () => client.getInvocation(rows.invocations[0]!.id),
      (row) => row.review !== null,
      60_000,
      'the reconciler settling the call',
    );
    expect(reviewed.review).toMatchObject({ resolution: 'succeeded', reviewed_by: 'reconciler:demo.external_write' });
    expect(reviewed.reconciliation).toMatchObject({ reconciler: 'demo.external_write', last_outcome: 'applied', attempts: 1 });
    const queue = await client.listUncertain({ limit: 100 });
    expect(queue.invocations.map((r) => r.id)).not.toContain(rows.invocations[0]!.id);
  }, 180_000);
});
