import { describe, expect, it } from 'vitest';
import type { PolicyEngine } from '@veetbot/ports';
import { executeToolCall, type PipelineResult } from '@veetbot/executor';
import { concludedOf, drivers } from '../src';
import { usePipelineHarness } from './pipeline-suite';

/**
 * docs/adr/0042: the batch planner's dry run (steps 1–7) is carried into the durable run of the
 * same call, so steps 1–7 are evaluated once per call — and only a plan the executor itself made,
 * for this very request in this very session, is ever carried.
 */
describe.each(drivers())('a planned admission is carried into the durable run (%s)', (driver) => {
  const scene = usePipelineHarness(driver);

  async function countingWorker() {
    const h = scene();
    let evaluations = 0;
    const policy: PolicyEngine = {
      evaluate: (...args) => {
        evaluations += 1;
        return h.policy.evaluate(...args);
      },
      offers: (...args) => h.policy.offers(...args),
    };
    const worker = await h.takeOver('worker-counting', { policy });
    return { h, worker, evaluations: () => evaluations };
  }

  it('evaluates policy no more often for a kept dry run + carried run than for the durable run alone, and walks all fourteen steps', async () => {
    const { h, worker, evaluations } = await countingWorker();

    const alone = h.call('demo.external_write', { line: 'alone' });
    const before = evaluations();
    concludedOf(await worker.execute(alone));
    const durableAlone = evaluations() - before;
    expect(durableAlone).toBeGreaterThanOrEqual(1);

    const request = h.call('demo.external_write', { line: 'planned' });
    const start = evaluations();
    const preview = await executeToolCall(worker.deps, h.session, request, { dryRun: true, keepPlan: true });
    expect(preview.kind).toBe('authorized');
    h.steps.length = 0;
    const result = concludedOf(
      await executeToolCall(worker.deps, h.session, request, { dryRun: false, run: worker.run, planned: preview }),
    );
    expect(evaluations() - start).toBe(durableAlone);
    // Observers still see every step once, in order, from the durable run.
    expect(h.steps).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
    expect(result.invocationStatus).toBe('succeeded');
    // The row carries what the dry run concluded: its normalized hash, its validated arguments.
    const row = await h.invocationOfCall(request.callId);
    expect(preview.kind === 'authorized' && row.argumentsHash).toBe(preview.kind === 'authorized' ? preview.call.argumentsHash : null);
    expect(row.arguments).toEqual({ line: 'planned' });
    expect(await h.outboxLines()).toEqual(expect.arrayContaining([expect.stringContaining('planned')]));
  });

  it('evaluates afresh when the plan is not one it made for this request: a copy, another request object, another session', async () => {
    const { h, worker, evaluations } = await countingWorker();
    const alone = h.call('math.evaluate', { expression: '1 + 1' });
    const before = evaluations();
    concludedOf(await worker.execute(alone));
    const durableAlone = evaluations() - before;

    const attempts: Array<(request: ReturnType<typeof h.call>, preview: PipelineResult) => Promise<PipelineResult>> = [
      // A forged plan: the same fields in another object.
      (request, preview) => executeToolCall(worker.deps, h.session, request, { dryRun: false, run: worker.run, planned: { ...preview } }),
      // The plan of an equal request, but not this one.
      (request, preview) => executeToolCall(worker.deps, h.session, { ...request }, { dryRun: false, run: worker.run, planned: preview }),
      // The same request in another session view.
      (request, preview) => executeToolCall(worker.deps, { ...h.session }, request, { dryRun: false, run: worker.run, planned: preview }),
    ];
    for (const [i, attempt] of attempts.entries()) {
      const request = h.call('math.evaluate', { expression: `${i} + 2` });
      const preview = await executeToolCall(worker.deps, h.session, request, { dryRun: true, keepPlan: true });
      const start = evaluations();
      expect(concludedOf(await attempt(request, preview)).invocationStatus).toBe('succeeded');
      expect(evaluations() - start).toBe(durableAlone);
    }
  });

  it('keeps no plan from a dry run that did not ask to keep one', async () => {
    const { h, worker, evaluations } = await countingWorker();
    const alone = h.call('math.evaluate', { expression: '5 + 5' });
    const before = evaluations();
    concludedOf(await worker.execute(alone));
    const durableAlone = evaluations() - before;
    const request = h.call('math.evaluate', { expression: '6 + 6' });
    const start = evaluations();
    const preview = await executeToolCall(worker.deps, h.session, request, { dryRun: true });
    concludedOf(await executeToolCall(worker.deps, h.session, request, { dryRun: false, run: worker.run, planned: preview }));
    expect(evaluations() - start).toBe(1 + durableAlone);
  });

  it('never carries a refusal, nor a dry run that was given the caller’s approval answer', async () => {
    const { h, worker, evaluations } = await countingWorker();
    const bad = h.call('math.evaluate', { expression: 42 });
    const preview = await executeToolCall(worker.deps, h.session, bad, { dryRun: true, keepPlan: true });
    expect(preview.kind).toBe('concluded');
    h.steps.length = 0;
    const refused = concludedOf(await executeToolCall(worker.deps, h.session, bad, { dryRun: false, run: worker.run, planned: preview }));
    expect(refused.item.outcome.reason_code).toBe('tool.arguments_invalid');
    // Steps 1–4 ran again (the refusal at step 4 ends the call there).
    expect(h.steps).toEqual([1, 2, 3, 4]);

    const answered = h.call('math.evaluate', { expression: '3 + 4' }, { approval: 'approved' });
    const dry = await executeToolCall(worker.deps, h.session, answered, { dryRun: true, keepPlan: true });
    const start = evaluations();
    concludedOf(await executeToolCall(worker.deps, h.session, answered, { dryRun: false, run: worker.run, planned: dry }));
    expect(evaluations() - start).toBeGreaterThanOrEqual(1);
  });
});
