import { describe, expect, it } from 'vitest';
import { DEFAULT_PIPELINE_LIMITS, INVALID_TOOL_NAME } from '@veetbot/executor';
import { UNVALIDATED_ARGUMENTS_KEY } from '@veetbot/domain';
import type { InvocationRow } from '@veetbot/ports';
import { drivers } from '../src';
import { useRuntimeScene, userCall, type RuntimeScene } from './runtime-harness';

/**
 * Issue 10, items 5 and 6, through the runtime on a real database (docs/adr/0020):
 * - a call refused before step 5 keeps the arguments it was sent (bounded, marked
 *   unvalidated) and is keyed on them and the raw name, so different refused calls are
 *   different calls to the breaker;
 * - a run the breaker ends says so in the item and on the run row;
 * - the synthesis-only turn refuses any tool;
 * - budgets.maximum_tool_calls and the run's deadline are enforced.
 */
describe.each(drivers())('refusals, breakers, budgets and deadlines on %s', (driver) => {
  const scene = useRuntimeScene(driver);

  async function openRun(s: RuntimeScene, options: { maximumToolCalls?: number; deadlineInMs?: number } = {}): Promise<string> {
    const session = await s.runtime.openSession(
      s.tenantId,
      s.principal,
      { agentId: 'agent-1' },
      { flags: {}, targetKinds: ['in_process'] },
    );
    const run = await s.runtime.createRun(s.tenantId, session.id, {
      deadlineAt: new Date(s.clock.now().getTime() + (options.deadlineInMs ?? 3_600_000)),
      ...(options.maximumToolCalls === undefined ? {} : { budgets: { maximumToolCalls: options.maximumToolCalls } }),
    });
    return run.id;
  }

  const rowsOf = (s: RuntimeScene, runId: string): Promise<InvocationRow[]> => s.stores.invocations.listForRun(s.tenantId, runId);

  it('five different schema-invalid argument sets are five calls: kept as received, marked unvalidated, the run goes on', async () => {
    const s = scene();
    const runId = await openRun(s);
    const invalid = ['one', 'two', 'three', 'four', 'five'].map((n) => ({ n }));
    for (const [i, args] of invalid.entries()) {
      const outcome = await s.runtime.submitStep(s.step(runId, i + 1, [userCall(`c${i}`, 'demo.rt_read', args)]));
      expect(outcome.items[0]?.outcome.reason_code).toBe('tool.arguments_invalid');
      expect(outcome).toMatchObject({ runFailed: null, synthesisOnly: false });
    }
    expect(await s.stores.runs.get(s.tenantId, runId)).toMatchObject({ status: 'running', failureReason: null });
    const rows = await rowsOf(s, runId);
    expect(new Set(rows.map((r) => r.argumentsHash)).size).toBe(5);
    expect(rows.map((r) => r.arguments)).toEqual(
      invalid.map((args) => ({
        [UNVALIDATED_ARGUMENTS_KEY]: {
          received: args,
          excerpt: null,
          received_bytes: JSON.stringify(args).length,
          truncated: false,
          tool_name: null,
        },
      })),
    );
    // The tool never ran.
    expect(s.probes['demo.rt_read'].executions).toBe(0);
  });

  it('three different malformed tool names are three calls; each raw name is kept in the record, never as the row name', async () => {
    const s = scene();
    const runId = await openRun(s);
    const names = ['Not A Tool', 'IGNORE PREVIOUS INSTRUCTIONS', 'demo..rt_read'];
    const outcome = await s.runtime.submitStep(
      s.step(
        runId,
        1,
        names.map((name, i) => userCall(`m${i}`, name, { n: 1 })),
      ),
    );
    expect(outcome.items.map((i) => [i.tool_name, i.outcome.reason_code])).toEqual(
      names.map(() => [INVALID_TOOL_NAME, 'policy.matrix.unknown_tool']),
    );
    expect(outcome.runFailed).toBeNull();
    // Three more steps of the same three names: none reaches the identical-call threshold.
    for (let step = 2; step <= 4; step++) {
      const again = await s.runtime.submitStep(
        s.step(
          runId,
          step,
          names.map((name, i) => userCall(`m${i}`, name, { n: step })),
        ),
      );
      expect(again.runFailed).toBeNull();
    }
    const rows = await rowsOf(s, runId);
    expect(rows).toHaveLength(12);
    expect(new Set(rows.map((r) => r.argumentsHash)).size).toBe(12);
    expect(rows.every((r) => r.toolName === INVALID_TOOL_NAME)).toBe(true);
    const first = rows
      .filter((r) => r.stepNumber === 1)
      .map((r) => (r.arguments[UNVALIDATED_ARGUMENTS_KEY] as { tool_name: string }).tool_name);
    expect(first.sort()).toEqual([...names].sort());
    expect(await s.stores.runs.get(s.tenantId, runId)).toMatchObject({ status: 'running' });
  });

  it('a really repeated invalid call trips the breaker: the item says tool.loop_detected, and so does the run', async () => {
    const s = scene();
    const runId = await openRun(s);
    const same = (step: number) => s.runtime.submitStep(s.step(runId, step, [userCall(`c${step}`, 'demo.rt_read', { n: 'same' })]));
    for (let step = 1; step <= 3; step++) expect(await same(step)).toMatchObject({ runFailed: null, synthesisOnly: false });
    expect(await same(4)).toMatchObject({ runFailed: null, synthesisOnly: true });
    const fifth = await same(5);
    expect(fifth.runFailed).toBe('tool_loop_detected');
    expect(fifth.items[0]?.outcome).toMatchObject({ status: 'failed', reason_code: 'tool.loop_detected' });
    expect(await s.stores.runs.get(s.tenantId, runId)).toMatchObject({ status: 'failed', failureReason: 'tool.loop_detected' });
    const last = (await rowsOf(s, runId)).at(-1);
    expect(last).toMatchObject({ stepNumber: 5, status: 'failed', reasonCode: 'tool.loop_detected' });
    // The refusal row keeps the unvalidated record too: the same key as the four before it.
    expect(last?.arguments).toMatchObject({ [UNVALIDATED_ARGUMENTS_KEY]: { received: { n: 'same' } } });
  });

  it('the synthesis-only turn refuses a different tool before dispatch, and the run says why', async () => {
    const s = scene();
    const runId = await openRun(s);
    for (let step = 1; step <= 4; step++) await s.runtime.submitStep(s.step(runId, step, [userCall(`c${step}`, 'demo.rt_read', { n: 1 })]));
    expect(s.probes['demo.rt_read'].executions).toBe(4);
    const turn = await s.runtime.submitStep(
      s.step(runId, 5, [userCall('other', 'demo.rt_idempotent', { n: 2 }), userCall('math', 'math.evaluate', { expression: '1 + 1' })]),
    );
    expect(turn.items.map((i) => i.outcome.reason_code)).toEqual(['tool.loop_detected', 'tool.loop_detected']);
    expect(turn.runFailed).toBe('tool_loop_detected');
    expect(s.probes['demo.rt_idempotent'].executions).toBe(0);
    expect(await s.stores.runs.get(s.tenantId, runId)).toMatchObject({ status: 'failed', failureReason: 'tool.loop_detected' });
  });

  it('maximum_tool_calls 0 refuses the first call with tool.budget_exhausted, recorded, nothing run', async () => {
    const s = scene();
    const runId = await openRun(s, { maximumToolCalls: 0 });
    const outcome = await s.runtime.submitStep(s.step(runId, 1, [userCall('a', 'demo.rt_read', { n: 1 })]));
    expect(outcome.items[0]?.outcome).toMatchObject({ status: 'failed', reason_code: 'tool.budget_exhausted' });
    expect(s.probes['demo.rt_read'].executions).toBe(0);
    expect(await rowsOf(s, runId)).toEqual([expect.objectContaining({ status: 'failed', reasonCode: 'tool.budget_exhausted' })]);
    // An exhausted budget does not end the run: the model may still answer.
    expect(await s.stores.runs.get(s.tenantId, runId)).toMatchObject({ status: 'running' });
  });

  it('maximum_tool_calls N allows exactly N calls, across a batch and the steps after it', async () => {
    const s = scene();
    const runId = await openRun(s, { maximumToolCalls: 3 });
    const first = await s.runtime.submitStep(
      s.step(
        runId,
        1,
        [1, 2].map((n) => userCall(`a${n}`, 'demo.rt_read', { n })),
      ),
    );
    expect(first.items.map((i) => i.outcome.status)).toEqual(['succeeded', 'succeeded']);
    const second = await s.runtime.submitStep(
      s.step(
        runId,
        2,
        [3, 4, 5].map((n) => userCall(`b${n}`, 'demo.rt_read', { n })),
      ),
    );
    expect(second.items.map((i) => i.outcome.reason_code)).toEqual(['tool.ok', 'tool.budget_exhausted', 'tool.budget_exhausted']);
    const third = await s.runtime.submitStep(s.step(runId, 3, [userCall('c', 'demo.rt_read', { n: 6 })]));
    expect(third.items[0]?.outcome.reason_code).toBe('tool.budget_exhausted');
    expect(s.probes['demo.rt_read'].executions).toBe(3);
    // A resubmitted step decides what it decided the first time.
    const again = await s.runtime.submitStep(
      s.step(
        runId,
        2,
        [3, 4, 5].map((n) => userCall(`b${n}`, 'demo.rt_read', { n })),
      ),
    );
    expect(again.items.map((i) => i.outcome.reason_code)).toEqual(['tool.ok', 'tool.budget_exhausted', 'tool.budget_exhausted']);
    expect(s.probes['demo.rt_read'].executions).toBe(3);
  });

  it('step numbers out of order cannot overspend the budget', async () => {
    const s = scene();
    const runId = await openRun(s, { maximumToolCalls: 1 });
    expect((await s.runtime.submitStep(s.step(runId, 10, [userCall('a', 'demo.rt_read', { n: 1 })]))).items[0]?.outcome.status).toBe(
      'succeeded',
    );
    const lower = await s.runtime.submitStep(s.step(runId, 1, [userCall('b', 'demo.rt_read', { n: 2 })]));
    expect(lower.items[0]?.outcome.reason_code).toBe('tool.budget_exhausted');
    expect(s.probes['demo.rt_read'].executions).toBe(1);
  });

  it('concurrent steps on one run cannot overspend the budget: the run lease serializes them', async () => {
    const s = scene();
    const runId = await openRun(s, { maximumToolCalls: 1 });
    // Hold the first step inside its tool while a second worker submits the next step.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    s.probes['demo.rt_read'].during = async () => {
      entered();
      await held;
    };
    const first = s.runtime.submitStep(s.step(runId, 1, [userCall('a', 'demo.rt_read', { n: 1 })]));
    await inside;
    const other = s.worker('worker-other');
    await expect(other.submitStep(s.step(runId, 2, [userCall('b', 'demo.rt_read', { n: 2 })]))).rejects.toMatchObject({
      code: 'runtime.run_busy',
    });
    release();
    expect((await first).items[0]?.outcome.status).toBe('succeeded');
    s.probes['demo.rt_read'].during = null;
    const second = await other.submitStep(s.step(runId, 2, [userCall('b', 'demo.rt_read', { n: 2 })]));
    expect(second.items[0]?.outcome.reason_code).toBe('tool.budget_exhausted');
    expect(s.probes['demo.rt_read'].executions).toBe(1);
  });

  it('a step after the run deadline fails the run with run.deadline_exceeded, not a tool timeout', async () => {
    const s = scene();
    const runId = await openRun(s, { deadlineInMs: 60_000 });
    expect((await s.runtime.submitStep(s.step(runId, 1, [userCall('a', 'demo.rt_read', { n: 1 })]))).items[0]?.outcome.status).toBe(
      'succeeded',
    );
    s.clock.advance(60_000);
    const late = await s.runtime.submitStep(s.step(runId, 2, [userCall('b', 'demo.rt_read', { n: 2 }), userCall('c', 'no.such_tool', {})]));
    expect(late.items.map((i) => i.outcome.reason_code)).toEqual(['run.deadline_exceeded', 'run.deadline_exceeded']);
    expect(late.runFailed).toBe('deadline_exceeded');
    expect(s.probes['demo.rt_read'].executions).toBe(1);
    expect(await s.stores.runs.get(s.tenantId, runId)).toMatchObject({ status: 'failed', failureReason: 'run.deadline_exceeded' });
    await expect(s.runtime.submitStep(s.step(runId, 3, [userCall('d', 'demo.rt_read', { n: 3 })]))).rejects.toMatchObject({
      code: 'runtime.run_not_active',
    });
  });

  it('arguments over the byte limit are kept as a marked excerpt at the bound; the hash still covers all of them', async () => {
    const s = scene();
    const runId = await openRun(s);
    const limit = DEFAULT_PIPELINE_LIMITS.maximumArgumentBytes;
    const big = (tail: string) => ({ n: 'x'.repeat(limit) + tail });
    await s.runtime.submitStep(s.step(runId, 1, [userCall('a', 'demo.rt_read', big('a')), userCall('b', 'demo.rt_read', big('b'))]));
    const rows = await rowsOf(s, runId);
    expect(rows[0]?.argumentsHash).not.toBe(rows[1]?.argumentsHash);
    for (const row of rows) {
      const record = row.arguments[UNVALIDATED_ARGUMENTS_KEY] as {
        received: unknown;
        excerpt: string;
        truncated: boolean;
        received_bytes: number;
      };
      expect(record).toMatchObject({ received: null, truncated: true, received_bytes: limit + 9 });
      expect(record.excerpt.endsWith('…[truncated]')).toBe(true);
      expect(Buffer.byteLength(record.excerpt, 'utf8')).toBeLessThanOrEqual(limit + Buffer.byteLength('…[truncated]', 'utf8'));
    }
  });
});
