import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RuntimeError } from '@veetbot/runtime';
import { modelCall, openCrashScene, TERMINAL_EVENTS, type CrashScene } from '../src/crash-scene';
import { drivers } from '../src/test-database';
import { concludedOf, openPipelineHarness } from '../src';

/**
 * Hard gate 8: "Two concurrent submissions of the same call produce one execution", the half of
 * it that one process can hold: fifty concurrent submissions of one key, through the Runtime
 * (five workers of one process, each its own owner and in-flight state) and through the pipeline
 * itself (one worker, executeToolCall fifty times at once). One row, one effect, and every other
 * submission answered with the recorded outcome, tool.concurrency_conflict or runtime.run_busy.
 *
 * It runs on the embedded PGlite always, so a plain `pnpm test` without DATABASE_URL still
 * asserts the gate (ADR 0026), and on PostgreSQL as well when DATABASE_URL is set. PGlite has one
 * connection and runs one transaction at a time, so there the race is between the awaits of the
 * Runtime and the pipeline (the dedup insert, the claim, the run lease), not between two
 * interleaved transactions; that, and two real processes, is gate-08-concurrent-submission.test.ts
 * on PostgreSQL.
 */

describe.each(drivers())('Hard gate 8 on %s: fifty concurrent submissions of one key from one process', (driver) => {
  let scene: CrashScene;

  beforeAll(async () => {
    scene = await openCrashScene({ driver, warmChildren: 0 });
  }, 120_000);

  afterAll(async () => {
    await scene?.close();
  });

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
      expect(
        new Set(
          results.filter((r) => concludedOf(r).item.outcome.reason_code === 'tool.ok').map((r) => JSON.stringify(concludedOf(r).item)),
        ).size,
      ).toBe(1);

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
