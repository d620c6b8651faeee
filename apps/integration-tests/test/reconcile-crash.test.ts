import { createApiStores } from '@veetbot/store-postgres';
import { createBuiltinReconcilers } from '@veetbot/tools-builtin';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { argumentsFor, CHILD_LEASE_TTL_MS, modelCall, openCrashScene, type CrashScene } from '../src/crash-scene';
import { outboxFile } from '../src/crash-tools';
import { laterClock } from '../src/crash-world';

/**
 * docs/adr/0063 with a REAL worker process SIGKILLed inside demo.external_write (as gate 7 does):
 * after the watermark and before the append, and after the append. A fresh worker's sweep ends
 * the row UNCERTAIN and settles it through the outbox reconciler, with the evidence as the
 * review's note and reviewed_by naming the reconciler.
 */

let scene: CrashScene;
beforeAll(async () => {
  scene = await openCrashScene({ warmChildren: 1 });
  // The outbox exists (a missing outbox is no evidence): one call sent normally first.
  const runId = await scene.newRun();
  await scene.api.runtime.submitStep(
    scene.submission(runId, [modelCall('call-0', 'demo.external_write', argumentsFor('demo.external_write', 'sent first'))]),
  );
}, 120_000);
afterAll(() => scene?.close());

describe('a demo.external_write whose worker was SIGKILLed after the watermark', () => {
  it.each([
    { point: 'before_effect' as const, resolution: 'not_applied', outcome: 'not_applied', effects: 0 },
    { point: 'after_effect' as const, resolution: 'succeeded', outcome: 'applied', effects: 1 },
  ])('dies $point: the sweep settles it $outcome as its review', async ({ point, resolution, outcome, effects }) => {
    const runId = await scene.newRun();
    const call = modelCall('call-1', 'demo.external_write', argumentsFor('demo.external_write', `reconcile crash ${point}`));
    const { child } = scene.child({ runId, calls: [call], dieAtStep: null, inTool: { point, action: 'die' } });
    expect(await child.exited, child.stderr).toEqual({ code: null, signal: 'SIGKILL' });
    const [found] = await scene.rows(runId);
    expect(found).toMatchObject({ status: 'running' });
    expect(found!.effectSentAt).not.toBeNull();
    const sent = (await scene.outbox('demo.external_write')).filter((r) => r.key === found!.idempotencyKey);
    expect(sent).toHaveLength(effects);

    const recovery = scene.world(`reconcile-${point}`, {
      clock: laterClock(CHILD_LEASE_TTL_MS + 1_000),
      reconcilers: createBuiltinReconcilers({ outboxPath: outboxFile(scene.folders.outbox, 'demo.external_write') }),
    });
    const report = await recovery.runtime.sweep();
    expect(report).toMatchObject({ examined: 1, uncertain: 1, reconciled: { examined: 1, settled: 1 } });

    const [row] = await scene.rows(runId);
    expect(row).toMatchObject({ status: 'uncertain', reasonCode: 'tool.outcome_unknown' });
    expect(await scene.stores.reconciliations.get(scene.tenantId, row!.id)).toMatchObject({ lastOutcome: outcome, attempts: 1 });
    const events = await scene.eventsOf(runId, row!.id);
    expect(events.filter((e) => e.type === 'review.uncertain.resolved').map((e) => e.payload)).toEqual([
      expect.objectContaining({ resolution, reviewed_by: 'reconciler:demo.external_write' }),
    ]);
    // The review, where a person's resolution goes: the evidence as its note, the reconciler as its reviewer.
    expect(await createApiStores(scene.database.database).reviews.getByInvocation(scene.tenantId, row!.id)).toMatchObject({
      resolution,
      reviewedBy: 'reconciler:demo.external_write',
      note: expect.stringMatching(/^Scanned \d+ records/),
    });
    // Nothing was re-sent.
    expect((await scene.outbox('demo.external_write')).filter((r) => r.key === row!.idempotencyKey)).toHaveLength(effects);
  });
});
