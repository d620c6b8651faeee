import { VeetbotClient, type StepOutcome, type SubmittedCall } from '@veetbot/client';
import { UNVALIDATED_ARGUMENTS_KEY } from '@veetbot/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScene, type E2eScene } from '../src/e2e-processes';

/**
 * Issue 10, items 5 and 6, over HTTP against the real api and worker processes on PostgreSQL
 * (docs/adr/0020): refused calls keep what was sent and are told apart by the breaker; a run
 * the breaker or the deadline ends says why in the item and on GET /v1/runs/{id}; the
 * synthesis-only turn refuses any tool; budgets.maximum_tool_calls is enforced.
 */
let scene: E2eScene;
let client: VeetbotClient;

beforeAll(async () => {
  scene = await startScene({ workers: 1 });
  client = new VeetbotClient({ baseUrl: scene.baseUrl, apiKey: scene.demoKey });
}, 180_000);

afterAll(async () => {
  await scene?.close();
});

async function newRun(options: { deadline_seconds?: number; maximum_tool_calls?: number } = {}): Promise<string> {
  const session = await client.openSession({ agent_id: 'refusals-agent' });
  const run = await client.createRun({
    session_id: session.id,
    deadline_seconds: options.deadline_seconds ?? 600,
    ...(options.maximum_tool_calls === undefined ? {} : { budgets: { maximum_tool_calls: options.maximum_tool_calls } }),
  });
  return run.id;
}

const call = (call_id: string, tool_name: string, args: unknown): SubmittedCall => ({
  call_id,
  tool_name,
  arguments: args,
  context_trust: ['user'],
});
const step = (runId: string, step_number: number, calls: SubmittedCall[]): Promise<StepOutcome> =>
  client.submitStepAndWait(runId, { step_number, calls, wait_seconds: 20 });
const reasons = (outcome: StepOutcome) => outcome.items.map((i) => i.outcome.reason_code);

describe('item 5: refusals before validation keep what was sent (HTTP)', () => {
  it('five different invalid argument sets and three malformed names are different calls; the rows hold them, marked unvalidated', async () => {
    const runId = await newRun();
    const invalid = [1, 2, 3, 4, 5].map((n) => ({ expression: n }));
    for (const [i, args] of invalid.entries()) {
      const outcome = await step(runId, i + 1, [call(`c${i}`, 'math.evaluate', args)]);
      expect(reasons(outcome)).toEqual(['tool.arguments_invalid']);
      expect(outcome).toMatchObject({ status: 'completed', run_status: 'running', synthesis_only: false });
    }
    const names = ['Math Evaluate', 'math.evaluate; rm -rf /', 'MATH.EVALUATE'];
    const malformed = await step(
      runId,
      6,
      names.map((name, i) => call(`m${i}`, name, { expression: '1' })),
    );
    expect(reasons(malformed)).toEqual(['policy.matrix.unknown_tool', 'policy.matrix.unknown_tool', 'policy.matrix.unknown_tool']);
    expect(await client.getRun(runId)).toMatchObject({ status: 'running', failure_reason: null });

    const { invocations } = await client.listInvocations({ run_id: runId, limit: 100 });
    expect(invocations).toHaveLength(8);
    expect(new Set(invocations.map((i) => i.arguments_hash)).size).toBe(8);
    const received = invocations.map(
      (i) => (i.arguments[UNVALIDATED_ARGUMENTS_KEY] as { received: unknown; tool_name: string | null } | undefined) ?? null,
    );
    expect(received.every((r) => r !== null)).toBe(true);
    expect(received.map((r) => r!.received)).toEqual(expect.arrayContaining(invalid));
    expect(
      received
        .map((r) => r!.tool_name)
        .filter((n) => n !== null)
        .sort(),
    ).toEqual([...names].sort());
  });

  it('a really repeated call trips the breaker: the item says tool.loop_detected, and so does GET /v1/runs/{id}', async () => {
    const runId = await newRun();
    for (let n = 1; n <= 4; n++) await step(runId, n, [call(`c${n}`, 'math.evaluate', { expression: '6 * 7' })]);
    const fifth = await step(runId, 5, [call('c5', 'math.evaluate', { expression: '6 * 7' })]);
    expect(reasons(fifth)).toEqual(['tool.loop_detected']);
    expect(fifth.run_status).toBe('failed');
    expect(await client.getRun(runId)).toMatchObject({ status: 'failed', failure_reason: 'tool.loop_detected' });
  });

  it('the synthesis-only turn refuses a different tool with tool.loop_detected', async () => {
    const runId = await newRun();
    let last: StepOutcome | undefined;
    for (let n = 1; n <= 4; n++) last = await step(runId, n, [call(`c${n}`, 'math.evaluate', { expression: '1 + 1' })]);
    expect(last?.synthesis_only).toBe(true);
    const turn = await step(runId, 5, [call('w', 'workspace.list', {})]);
    expect(reasons(turn)).toEqual(['tool.loop_detected']);
    expect(await client.getRun(runId)).toMatchObject({ status: 'failed', failure_reason: 'tool.loop_detected' });
  });
});

describe('item 6: budgets and deadlines are enforced (HTTP)', () => {
  it('maximum_tool_calls 0 refuses the first call; N allows exactly N', async () => {
    const none = await newRun({ maximum_tool_calls: 0 });
    expect(reasons(await step(none, 1, [call('a', 'math.evaluate', { expression: '1' })]))).toEqual(['tool.budget_exhausted']);
    expect(await client.getRun(none)).toMatchObject({ status: 'running', budgets: { maximum_tool_calls: 0 } });

    const two = await newRun({ maximum_tool_calls: 2 });
    const batch = await step(
      two,
      1,
      [1, 2, 3].map((n) => call(`b${n}`, 'math.evaluate', { expression: String(n) })),
    );
    expect(reasons(batch)).toEqual(['tool.ok', 'tool.ok', 'tool.budget_exhausted']);
    expect(reasons(await step(two, 2, [call('c', 'math.evaluate', { expression: '4' })]))).toEqual(['tool.budget_exhausted']);
    const { invocations } = await client.listInvocations({ run_id: two, limit: 10 });
    expect(invocations.filter((i) => i.status === 'succeeded')).toHaveLength(2);
  });

  it('a step after the run deadline fails the run with run.deadline_exceeded', async () => {
    const runId = await newRun({ deadline_seconds: 1 });
    const deadlineAt = Date.parse((await client.getRun(runId)).deadline_at);
    // Wait for the wall clock (the worker's too) to pass the deadline; nothing is timed.
    while (Date.now() <= deadlineAt) await new Promise((resolve) => setTimeout(resolve, Math.max(10, deadlineAt - Date.now() + 10)));
    const late = await step(runId, 1, [call('a', 'math.evaluate', { expression: '1' })]);
    expect(reasons(late)).toEqual(['run.deadline_exceeded']);
    expect(late.run_status).toBe('failed');
    expect(await client.getRun(runId)).toMatchObject({ status: 'failed', failure_reason: 'run.deadline_exceeded' });
  });
});
