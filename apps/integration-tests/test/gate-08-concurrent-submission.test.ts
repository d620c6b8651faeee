import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResultItem } from '@veetbot/domain';
import type { StepOutcome } from '@veetbot/runtime';
import type { ChildMessage } from '../src/crash-job';
import { argumentsFor, modelCall, openCrashScene, TERMINAL_EVENTS, type CrashScene } from '../src/crash-scene';
import type { CrashChild } from '../src/crash-child-process';
import { until } from '../src';

/**
 * Hard gate 8: "Two concurrent submissions of the same call produce one execution." Two REAL
 * worker processes (Runtime.submitStep over PostgreSQL) are handed the same call — same run,
 * step, call id and arguments — and released together by a barrier (one `go` line written to
 * both stdins back to back). Every time: one row, one effect, and the other submission answered
 * with the recorded outcome, tool.concurrency_conflict or runtime.run_busy. This file needs
 * PostgreSQL (postgres-only.json); the single-process half of the gate is
 * gate-08-one-process.test.ts, which runs on PGlite too (ADR 0026).
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

const itemOf = (final: Final): ToolResultItem | null =>
  final.event === 'outcome' ? ((final.outcome as StepOutcome).items[0] ?? null) : null;

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
