import type { PipelineStepNumber } from '@veetbot/executor';
import type { Clock, Reconciler, Reconcilers } from '@veetbot/ports';
import { createApiStores } from '@veetbot/store-postgres';
import { PrometheusToolMetrics } from '@veetbot/telemetry';
import { createBuiltinReconcilers } from '@veetbot/tools-builtin';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drivers } from '../../src';
import { argumentsFor, modelCall, openCrashScene, type CrashScene } from '../../src/crash-scene';
import { outboxFile } from '../../src/crash-tools';

/**
 * docs/adr/0063 on the real stores: a worker dies after demo.external_write's watermark (before
 * or after the effect), the recovery sweep ends the row UNCERTAIN and then offers it to the
 * tool's reconciler, which settles it with evidence as the row's review; a reconciler that
 * throws or hangs is retried with backoff and then left to a person.
 */

class Died extends Error {}
const dieAt = (step: PipelineStepNumber) => ({
  onStep: async (n: PipelineStepNumber) => {
    if (n === step) throw new Died('worker died');
  },
});

/** The wall clock, moved on by the test: recovering workers arrive after leases expire, backoffs pass. */
function movableClock(): Clock & { advance(ms: number): void } {
  let offset = 0;
  return {
    now: () => new Date(Date.now() + offset),
    advance: (ms) => {
      offset += ms;
    },
  };
}

const only = (reconciler: Reconciler): Reconcilers => ({
  forTool: (name) => (name === 'demo.external_write' ? reconciler : null),
  toolNames: () => ['demo.external_write'],
});

describe.each(drivers())('reconciling UNCERTAIN calls on %s', (driver) => {
  let scene: CrashScene;
  beforeAll(async () => {
    scene = await openCrashScene({ warmChildren: 0, driver });
  }, 120_000);
  afterAll(() => scene?.close());

  const builtin = () => createBuiltinReconcilers({ outboxPath: outboxFile(scene.folders.outbox, 'demo.external_write') });

  /** A demo.external_write call whose worker died inside step 10: after the watermark, before or after the append. */
  async function diedInside(point: 'before_effect' | 'after_effect', text: string): Promise<string> {
    const runId = await scene.newRun();
    const worker = scene.world(`dying-${text}`, {
      hooks: dieAt(11),
      effects:
        point === 'before_effect'
          ? {
              beforeEffect: async () => {
                throw new Died('worker died before the effect');
              },
            }
          : {},
    });
    const call = modelCall('call-1', 'demo.external_write', argumentsFor('demo.external_write', text));
    await expect(worker.runtime.submitStep(scene.submission(runId, [call]))).rejects.toThrow('worker died');
    const [row] = await scene.rows(runId);
    expect(row).toMatchObject({ status: 'running' });
    expect(row!.effectSentAt).not.toBeNull();
    return runId;
  }

  it('settles a call that died after the watermark but before the effect not_applied, with evidence, an event and a metric', async () => {
    // The outbox exists (another call was sent): a missing outbox is no evidence (unknown).
    const sent = await scene.newRun();
    const earlier = modelCall('call-1', 'demo.external_write', argumentsFor('demo.external_write', 'sent earlier'));
    await scene.api.runtime.submitStep(scene.submission(sent, [earlier]));
    const runId = await diedInside('before_effect', 'reconcile before');
    const clock = movableClock();
    clock.advance(120_000);
    const metrics = new PrometheusToolMetrics();
    const report = await scene.world('recovery-before', { clock, reconcilers: builtin(), metrics }).runtime.sweep();
    expect(report).toMatchObject({ uncertain: 1, reconciled: { examined: 1, settled: 1, unknown: 0, errors: 0 } });

    const [row] = await scene.rows(runId);
    expect(row).toMatchObject({ status: 'uncertain', reasonCode: 'tool.outcome_unknown' });
    const review = await scene.stores.reconciliations.get(scene.tenantId, row!.id);
    expect(review).toMatchObject({ reconciler: 'demo.external_write', attempts: 1, nextAttemptAt: null, lastOutcome: 'not_applied' });
    const events = await scene.eventsOf(runId, row!.id);
    expect(events.find((e) => e.type === 'review.uncertain.resolved')?.payload).toMatchObject({
      resolution: 'not_applied',
      reviewed_by: 'reconciler:demo.external_write',
    });
    expect(await createApiStores(scene.database.database).reviews.getByInvocation(scene.tenantId, row!.id)).toMatchObject({
      resolution: 'not_applied',
      reviewedBy: 'reconciler:demo.external_write',
      note: review!.lastEvidence,
    });
    expect(await metrics.metricsText()).toContain('tool_reconciled_total{name="demo.external_write",outcome="not_applied"} 1');
    // The outbox holds no record of the call, and the review says so.
    expect((await scene.outbox('demo.external_write')).some((r) => r.key === row!.idempotencyKey)).toBe(false);
    expect(review!.lastEvidence).toMatch(/^Scanned 1 records .* none carries key/);
  });

  it('settles a call that died after the effect applied (review resolution succeeded), and never offers a settled row again', async () => {
    const runId = await diedInside('after_effect', 'reconcile after');
    const clock = movableClock();
    clock.advance(120_000);
    const world = scene.world('recovery-after', { clock, reconcilers: builtin() });
    expect(await world.runtime.sweep()).toMatchObject({ uncertain: 1, reconciled: { settled: 1 } });
    const [row] = await scene.rows(runId);
    expect((await scene.outbox('demo.external_write')).filter((r) => r.key === row!.idempotencyKey)).toHaveLength(1);
    expect(await scene.stores.reconciliations.get(scene.tenantId, row!.id)).toMatchObject({ lastOutcome: 'applied', attempts: 1 });
    const resolved = (await scene.eventsOf(runId, row!.id)).filter((e) => e.type === 'review.uncertain.resolved');
    expect(resolved.map((e) => e.payload.resolution)).toEqual(['succeeded']);
    clock.advance(3_600_000);
    expect((await world.runtime.sweep()).reconciled).toMatchObject({ examined: 0 });
  });

  it('retries a reconciler that throws with backoff, then leaves the row to a person after the bounded attempts', async () => {
    const runId = await diedInside('before_effect', 'reconcile throws');
    const clock = movableClock();
    clock.advance(120_000);
    let asked = 0;
    const throwing = only({
      name: 'demo.external_write',
      reconcile: async () => {
        asked += 1;
        throw new Error('the lookup service is down');
      },
    });
    const settings = { reconcileMaximumAttempts: 2, reconcileBackoffMs: 60_000 };
    const world = scene.world('recovery-throws', { clock, reconcilers: throwing, settings });
    expect((await world.runtime.sweep()).reconciled).toMatchObject({ examined: 1, errors: 1 });
    const [row] = await scene.rows(runId);
    const first = await scene.stores.reconciliations.get(scene.tenantId, row!.id);
    expect(first).toMatchObject({ attempts: 1, lastOutcome: 'error', lastEvidence: 'The lookup failed.' });
    expect(first!.nextAttemptAt!.getTime()).toBe(first!.updatedAt.getTime() + 60_000);

    // Not due yet: a restarted worker (a new Runtime) does not ask again before the backoff.
    const restarted = scene.world('recovery-throws-2', { clock, reconcilers: throwing, settings });
    expect((await restarted.runtime.sweep()).reconciled).toMatchObject({ examined: 0 });
    clock.advance(60_001);
    expect((await restarted.runtime.sweep()).reconciled).toMatchObject({ examined: 1, errors: 1 });
    expect(await scene.stores.reconciliations.get(scene.tenantId, row!.id)).toMatchObject({ attempts: 2, nextAttemptAt: null });
    clock.advance(3_600_000);
    expect((await restarted.runtime.sweep()).reconciled).toMatchObject({ examined: 0 });
    expect(asked).toBe(2);

    // Left to a person: still in the review queue, unresolved.
    expect(await scene.stores.invocations.getById(scene.tenantId, row!.id)).toMatchObject({ status: 'uncertain' });
    expect((await scene.eventsOf(runId, row!.id)).some((e) => e.type === 'review.uncertain.resolved')).toBe(false);
  });

  it('counts a reconciler that never answers as a failed attempt (timeout), and records an unknown answer without retrying', async () => {
    const runId = await diedInside('before_effect', 'reconcile hangs');
    const clock = movableClock();
    clock.advance(120_000);
    const hanging = only({ name: 'demo.external_write', reconcile: () => new Promise(() => undefined) });
    const settings = { reconcileMaximumAttempts: 1, reconcileTimeoutMs: 50 };
    expect((await scene.world('recovery-hangs', { clock, reconcilers: hanging, settings }).runtime.sweep()).reconciled).toMatchObject({
      errors: 1,
    });
    const [row] = await scene.rows(runId);
    expect(await scene.stores.reconciliations.get(scene.tenantId, row!.id)).toMatchObject({
      attempts: 1,
      nextAttemptAt: null,
      lastOutcome: 'error',
      lastEvidence: 'The lookup did not answer within 50 ms.',
    });

    const unknownRun = await diedInside('before_effect', 'reconcile unknown');
    let asked = 0;
    const unsure = only({
      name: 'demo.external_write',
      reconcile: async () => {
        asked += 1;
        return { outcome: 'unknown', evidence: 'cannot tell' };
      },
    });
    const world = scene.world('recovery-unknown', { clock, reconcilers: unsure });
    expect((await world.runtime.sweep()).reconciled).toMatchObject({ unknown: 1 });
    clock.advance(3_600_000);
    expect((await world.runtime.sweep()).reconciled).toMatchObject({ examined: 0 });
    expect(asked).toBe(1);
    const [unknownRow] = await scene.rows(unknownRun);
    expect(await scene.stores.reconciliations.get(scene.tenantId, unknownRow!.id)).toMatchObject({
      lastOutcome: 'unknown',
      lastEvidence: 'cannot tell',
      nextAttemptAt: null,
    });
  });
});
