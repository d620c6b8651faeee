import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResultItem } from '@veetbot/domain';
import type { StepOutcome } from '@veetbot/runtime';
import { RuntimeError } from '@veetbot/runtime';
import type { ChildMessage } from '../src/crash-job';
import { argumentsFor, modelCall, openCrashScene, TERMINAL_EVENTS, type CrashScene } from '../src/crash-scene';
import type { CrashChild } from '../src/crash-child-process';
import { concludedOf, openPipelineHarness, until } from '../src';

/**
 * Hard gate 8: "Two concurrent submissions of the same call produce one execution." Two REAL
 * worker processes (Runtime.submitStep over PostgreSQL) are handed the same call — same run,
 * step, call id and arguments — and released together by a barrier (one `go` line written to
 * both stdins back to back). Then fifty concurrent submissions of one key from one process,
 * through the Runtime (five workers of one process) and through the pipeline itself (one
 * worker). Every time: one row, one effect, and every other submission answered with the
 * recorded outcome, tool.concurrency_conflict or runtime.run_busy.
 */

let scene: CrashScene;

beforeAll(async () => {
  scene = await openCrashScene({ warmChildren: 2 });
}, 120_000);

afterAll(async () => {
  await scene?.close();
});

type Final = Extract<ChildMessage, { event: 'outcome' | 'error' }>;

async function finalOf(child: CrashChild): Promise<Final> {
  const exit = await child.exited;
  expect(exit, `stderr: ${child.stderr}`).toEqual({ code: 0, signal: null });
  const final = child.messages.find((m): m is Final => m.event === 'outcome' || m.event === 'error');
  if (final === undefined) throw new Error(`the child reported nothing; stderr: ${child.stderr}`);
  return final;
}

const itemOf = (final: Final): ToolResultItem | null => (final.event === 'outcome' ? ((final.outcome as StepOutcome).items[0] ?? null) : null);

describe('Hard gate 8: two processes submit the same call at the same moment', () => {
  const ROUNDS = [
    { toolName: 'demo.external_write', hold: false },
    { toolName: 'demo.crash_conditional', hold: false },
    // The first in holds the call inside the tool, after the watermark: the two certainly overlap.
    { toolName: 'demo.external_write', hold: true },
  ] as const;

  it.each(ROUNDS)('$toolName (held in the tool: $hold) executes once', async ({ toolName, hold }) => {
    const runId = await scene.newRun();
    const call = modelCall('call-race', toolName, argumentsFor(toolName, `gate 8 ${toolName} ${String(hold)}`));
    const before = (await scene.outbox(toolName)).length;
    const inTool = hold ? ({ point: 'before_effect', action: 'wait' } as const) : null;
    const a = scene.child({ runId, calls: [call], barrier: true, inTool }).child;
    const b = scene.child({ runId, calls: [call], barrier: true, inTool }).child;
    await Promise.all([a.message('armed'), b.message('armed')]);
    // The barrier: both are composed, connected and waiting; release them together.
    a.send('go');
    b.send('go');

    if (hold) {
      const inside = (c: CrashChild) => c.messages.some((m) => m.event === 'in_tool');
      await until(() => inside(a) || inside(b), 60_000);
      const holder = inside(a) ? a : b;
      const other = holder === a ? b : a;
      // While one process holds the run (its lease live, the call inside the tool), the other is refused without executing.
      const refused = await finalOf(other);
      expect(refused).toMatchObject({ event: 'error', code: 'runtime.run_busy', stepsReached: [] });
      holder.send('resume');
    }
    const finals = await Promise.all([finalOf(a), finalOf(b)]);

    // Exactly one process executed the tool (its pipeline reached step 10), and one effect left.
    const executed = finals.filter((f) => f.stepsReached.includes(10));
    expect(executed).toHaveLength(1);
    const winner = executed[0]!;
    expect(winner.event).toBe('outcome');
    const winnerItem = itemOf(winner)!;
    expect(winnerItem.outcome.status).toBe('succeeded');
    const loser = finals.find((f) => f !== winner)!;
    // The other: the recorded outcome (byte-identical), a conflict, or a busy run — never a second execution.
    if (loser.event === 'outcome') {
      const item = itemOf(loser)!;
      if (item.outcome.reason_code === 'tool.concurrency_conflict') expect(item.outcome.status).not.toBe('succeeded');
      else expect(JSON.stringify(item)).toBe(JSON.stringify(winnerItem));
    } else {
      expect(loser.code).toBe('runtime.run_busy');
    }

    const rows = await scene.rows(runId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'succeeded', attemptNumber: 1 });
    const lines = (await scene.outbox(toolName)).slice(before);
    expect(lines.map((l) => l.key)).toEqual([rows[0]!.idempotencyKey]);
    expect((await scene.eventsOf(runId, rows[0]!.id)).filter((e) => TERMINAL_EVENTS.has(e.type))).toHaveLength(1);
    const sent = (await scene.outbox('demo.external_write')).map((l) => l.key);
    expect(new Set(sent).size).toBe(sent.length);
  });
});

describe('Hard gate 8: fifty concurrent submissions of one key from one process', () => {
  it('through the Runtime (five workers, ten submissions each): one row, one effect', async () => {
    const runId = await scene.newRun();
    const toolName = 'demo.external_write';
    const submission = scene.submission(runId, [modelCall('call-50', toolName, { line: 'fifty submissions, one line' })]);
    const before = (await scene.outbox(toolName)).length;
    const workers = [1, 2, 3, 4, 5].map((n) => scene.world(`worker-50-${n}`).runtime);
    const settled = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => workers[i % 5]!.submitStep(submission)));

    const answered = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const refused = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
    expect(answered.length).toBeGreaterThanOrEqual(1);
    for (const error of refused) expect(RuntimeError.isInstance(error) && error.code).toBe('runtime.run_busy');
    // Whoever answered gave the one recorded outcome.
    const items = new Set(answered.map((o) => JSON.stringify(o.items)));
    expect(items.size).toBe(1);
    expect(answered[0]!.items[0]!.outcome.status).toBe('succeeded');

    const rows = await scene.rows(runId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'succeeded', attemptNumber: 1 });
    expect((await scene.outbox(toolName)).slice(before).map((l) => l.key)).toEqual([rows[0]!.idempotencyKey]);
  });

  it('through the pipeline (one worker holding the lease, executeToolCall fifty times at once): one row, one effect', async () => {
    const h = await openPipelineHarness(scene.database);
    try {
      const request = h.call('demo.external_write', { line: 'fifty calls, one line' }, { callId: 'call-50' });
      const results = await Promise.all(Array.from({ length: 50 }, () => h.execute(request)));
      const reasons = results.map((r) => concludedOf(r).item.outcome.reason_code);
      expect(reasons.filter((r) => r === 'tool.ok').length).toBeGreaterThanOrEqual(1);
      expect(reasons.every((r) => r === 'tool.ok' || r === 'tool.concurrency_conflict')).toBe(true);
      // The ones that got the outcome got the same item.
      expect(new Set(results.filter((r) => concludedOf(r).item.outcome.reason_code === 'tool.ok').map((r) => JSON.stringify(concludedOf(r).item))).size).toBe(1);

      expect(h.probe('demo.external_write').executions).toBe(1);
      const row = await h.invocationOfCall('call-50');
      expect(row).toMatchObject({ status: 'succeeded', attemptNumber: 1 });
      expect(await h.outboxLines()).toEqual([expect.stringMatching(new RegExp(`^${row.idempotencyKey}\\t`))]);
      expect((await h.eventsOf(row.id)).filter((e) => TERMINAL_EVENTS.has(e.type))).toHaveLength(1);
    } finally {
      await h.close();
    }
  });
});
