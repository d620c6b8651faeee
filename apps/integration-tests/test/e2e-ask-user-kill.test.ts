import { VeetbotClient } from '@veetbot/client';
import { createStores, openDatabase } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScene, until, type E2eScene } from '../src/e2e-processes';

/** The embedded default's demo tenant (apps/api/src/embedded/demo-tenant.ts): the scene's key is its key. */
const DEMO_TENANT_ID = 'demo';
const LEASE_TTL_MS = 3_000;
const SWEEP_MS = 1_000;

/*
 * § Control tools: "RUNNING with suspended_kind set and a released lease is the state the
 * recovery path must not treat as a dead worker", and the row is "what lets a resumed run know
 * that the question was already asked". The real api and worker processes on PostgreSQL: a run
 * asks its user a question, the worker that ran the step is SIGKILLed, a new worker runs past
 * the lease TTL and several sweeps — and the question is neither lost nor asked again.
 */
let scene: E2eScene;

beforeAll(async () => {
  scene = await startScene({
    workers: 0,
    workerEnv: { VEETBOT_LEASE_TTL_MS: String(LEASE_TTL_MS), VEETBOT_WORKER_SWEEP_MS: String(SWEEP_MS) },
  });
}, 120_000);

afterAll(async () => {
  await scene?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The run's rows and events as the store holds them (the events API is a stream; this is the log). */
async function readLog(runId: string) {
  const database = await openDatabase({ url: scene.url, poolSize: 1 });
  try {
    const stores = createStores(database);
    const run = await stores.runs.get(DEMO_TENANT_ID, runId);
    const rows = await stores.invocations.listForRun(DEMO_TENANT_ID, runId);
    const events = await stores.events.listAfter(DEMO_TENANT_ID, runId, 0, 1_000);
    return { run, rows, events };
  } finally {
    await database.close();
  }
}

describe('a run waiting for its user survives the SIGKILL of its worker', () => {
  it('the question stays listed and is never re-asked; the answer resumes the run on the new worker', async () => {
    const first = await scene.startWorker();
    const client = new VeetbotClient({ baseUrl: scene.baseUrl, apiKey: scene.demoKey });
    const session = await client.openSession({ agent_id: 'ask-kill', enabled_tools: ['conversation.ask_user', 'math.evaluate'] });
    expect(session.tools.map((t) => t.name).sort()).toEqual(['conversation.ask_user', 'math.evaluate']);
    const run = await client.createRun({ session_id: session.id, deadline_seconds: 3_600 });
    const askStep = {
      step_number: 1,
      calls: [
        { call_id: 'q1', tool_name: 'conversation.ask_user', arguments: { question: 'Which year?' }, context_trust: ['user' as const] },
      ],
      wait_seconds: 20,
    };
    const asked = await client.submitStepAndWait(run.id, askStep, { timeoutMs: 60_000 });
    expect(asked).toMatchObject({ status: 'suspended', run_status: 'waiting_for_user', items: [] });
    const questionId = asked.suspended[0]!.ref;
    expect(asked.suspended).toEqual([{ call_id: 'q1', invocation_id: questionId, kind: 'user_input', ref: questionId }]);
    await until(
      () => client.getRun(run.id),
      (r) => r.status === 'waiting_for_user',
      30_000,
      'the run waiting for its user',
    );

    // § Control tools: RUNNING with the suspension marker and the run's lease released.
    const suspended = await until(
      () => readLog(run.id),
      (log) => log.run?.leaseOwner === null,
      30_000,
      'the lease released',
    );
    expect(suspended.rows).toEqual([expect.objectContaining({ id: questionId, status: 'running', suspendedKind: 'user_input' })]);

    // SIGKILL the worker that asked; a new worker takes over the deployment.
    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const second = await scene.startWorker();
    // Past the lease TTL and several sweeps of the new worker.
    await sleep(LEASE_TTL_MS + 4 * SWEEP_MS);
    // The same step resubmitted answers the recorded state; nothing runs it again.
    expect(await client.submitStepAndWait(run.id, askStep, { timeoutMs: 30_000 })).toEqual(asked);
    await sleep(2 * SWEEP_MS);
    expect(second.child.exitCode).toBeNull();

    // The question is still there, asked exactly once.
    expect((await client.getRun(run.id)).status).toBe('waiting_for_user');
    const open = await client.listQuestions(run.id);
    expect(open.questions).toEqual([expect.objectContaining({ question_id: questionId, call_id: 'q1', question: 'Which year?' })]);
    const before = await readLog(run.id);
    expect(before.run).toMatchObject({ status: 'waiting_for_user', leaseOwner: null });
    expect(before.rows).toHaveLength(1);
    expect(before.rows[0]).toMatchObject({
      id: questionId,
      toolName: 'conversation.ask_user',
      status: 'running',
      suspendedKind: 'user_input',
      suspendedRef: questionId,
      attemptNumber: 1,
    });
    expect(before.events.filter((e) => e.type === 'run.suspended')).toHaveLength(1);
    expect(before.events.filter((e) => e.type === 'run.resumed')).toHaveLength(0);
    // A new step still waits for the answer.
    await expect(
      client.submitStep(run.id, {
        step_number: 2,
        calls: [{ call_id: 'm2', tool_name: 'math.evaluate', arguments: { expression: '2000+26' }, context_trust: ['user'] }],
      }),
    ).rejects.toMatchObject({ status: 409, code: 'run.waiting_for_user' });

    // The answer resumes it: step 1 completes with it, the run runs again, step 2 runs on the new worker.
    const answered = await client.answerQuestion(questionId, '2026');
    expect(answered.item).toMatchObject({ call_id: 'q1', trust: 'user', outcome: { status: 'succeeded' } });
    expect(answered.item.content).toEqual([{ type: 'text', text: '2026', trust: 'user' }]);
    const step1 = await client.getStep(run.id, 1);
    expect(step1).toMatchObject({ status: 'completed', suspended: [], run_status: 'running' });
    expect(step1.items).toEqual([answered.item]);
    expect((await client.listQuestions(run.id)).questions).toEqual([]);
    const step2 = await client.submitStepAndWait(
      run.id,
      {
        step_number: 2,
        calls: [{ call_id: 'm2', tool_name: 'math.evaluate', arguments: { expression: '2000+26' }, context_trust: ['user'] }],
        wait_seconds: 20,
      },
      { timeoutMs: 60_000 },
    );
    expect(step2).toMatchObject({ status: 'completed', run_status: 'running' });
    expect(step2.items[0]).toMatchObject({ call_id: 'm2', outcome: { status: 'succeeded' }, structured: { value: 2026 } });

    // Exactly one row for the question, completed once; one suspension, one resumption.
    const after = await readLog(run.id);
    const questionRows = after.rows.filter((r) => r.toolName === 'conversation.ask_user');
    expect(questionRows).toHaveLength(1);
    expect(questionRows[0]).toMatchObject({ id: questionId, status: 'succeeded', attemptNumber: 1 });
    expect(after.events.filter((e) => e.type === 'run.suspended')).toHaveLength(1);
    expect(after.events.filter((e) => e.type === 'run.resumed')).toHaveLength(1);
    // Events carry identity, never the question or its answer (§ Events and telemetry).
    for (const e of after.events) expect(JSON.stringify(e.payload)).not.toMatch(/Which year\?|"2026"/);
    const listed = await client.listInvocations({ run_id: run.id, tool_name: 'conversation.ask_user' });
    expect(listed.invocations.map((r) => [r.id, r.status])).toEqual([[questionId, 'succeeded']]);
  }, 180_000);
});
