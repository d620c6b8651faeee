import { describe, expect, it } from 'vitest';
import { FencingError, StoreError } from '@veetbot/domain';
import type { PipelineWorker } from '../src';
import { concludedOf, drivers } from '../src';
import { eventTypes, usePipelineHarness } from './pipeline-suite';

/**
 * Fencing (the event-log spec's lease, § Deduplication rule 3): once another owner acquires the
 * run's lease, every execution write of the old worker — claim, watermark, terminal write — is
 * refused. The pipeline does not turn that into an outcome (the old worker no longer speaks for
 * the run); it throws the typed FencingError to the worker, and the new owner's resubmission
 * settles the call under the recovery table.
 */
async function expectFenced(promise: Promise<unknown>): Promise<void> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, 'the stale worker must be refused').not.toBeNull();
  expect(FencingError.isInstance(error)).toBe(true);
  expect(StoreError.isInstance(error) && error.code).toBe('store.fenced');
}

describe.each(drivers())('executor fencing (%s)', (driver) => {
  const scene = usePipelineHarness(driver);

  it('the claim of a stale worker is refused: nothing runs, and the new owner runs it once', async () => {
    const h = scene();
    let b: PipelineWorker | null = null;
    h.onStep = async (step) => {
      if (step === 9 && b === null) b = await h.takeOver('worker-b');
    };
    const request = h.call('demo.external_write', { line: 'claimed by b' });
    await expectFenced(h.execute(request));
    h.onStep = null;

    expect(h.probe('demo.external_write').executions).toBe(0);
    const row = await h.invocationOfCall(request.callId);
    expect(row).toMatchObject({ status: 'authorized', startedAt: null });
    expect(eventTypes(await h.eventsOf(row.id))).toEqual(['tool.call.proposed', 'tool.call.authorized']);
    // The stale worker forgot the key: nothing is stuck "in flight" in its process.
    expect(h.worker.durable.inFlight.size).toBe(0);

    const settled = concludedOf(await b!.execute(request));
    expect(settled.invocationStatus).toBe('succeeded');
    expect(await h.outboxLines()).toHaveLength(1);
    expect((await h.invocation(row.id)).attemptNumber).toBe(1);
  });

  it('the watermark of a stale worker is refused: the tool never starts, no outcome is written', async () => {
    const h = scene();
    let b: PipelineWorker | null = null;
    h.onStep = async (step) => {
      if (step === 10 && b === null) b = await h.takeOver('worker-b');
    };
    const request = h.call('demo.external_write', { line: 'watermark refused' });
    await expectFenced(h.execute(request));
    h.onStep = null;

    expect(h.probe('demo.external_write').executions).toBe(0);
    expect(await h.outboxLines()).toEqual([]);
    const row = await h.invocationOfCall(request.callId);
    expect(row).toMatchObject({ status: 'running', effectSentAt: null, outcomeStatus: null, finishedAt: null });
    expect(eventTypes(await h.eventsOf(row.id))).toEqual(['tool.call.proposed', 'tool.call.authorized', 'tool.call.started']);

    // No watermark was committed, so recovery may run the non-idempotent call: exactly once.
    const settled = concludedOf(await b!.execute(request));
    expect(settled.invocationStatus).toBe('succeeded');
    expect(await h.outboxLines()).toHaveLength(1);
    expect((await h.invocation(row.id)).attemptNumber).toBe(2);
  });

  it('the terminal write of a stale worker is refused: the row stays RUNNING for the new owner', async () => {
    const h = scene();
    let b: PipelineWorker | null = null;
    // The lease is lost while the tool runs.
    h.probe('demo.slow_read').during = async () => {
      if (b === null) b = await h.takeOver('worker-b');
    };
    const request = h.call('demo.slow_read', {});
    await expectFenced(h.execute(request));
    h.probe('demo.slow_read').during = null;

    expect(h.probe('demo.slow_read').executions).toBe(1);
    const row = await h.invocationOfCall(request.callId);
    expect(row).toMatchObject({ status: 'running', outcomeStatus: null, result: null, finishedAt: null });
    expect(eventTypes(await h.eventsOf(row.id))).not.toContain('tool.call.completed');

    // The stale worker cannot settle it either way now.
    const stale = concludedOf(await h.execute(request));
    expect(stale.item.outcome.reason_code).toBe('tool.concurrency_conflict');

    const settled = concludedOf(await b!.execute(request));
    expect(settled.invocationStatus).toBe('succeeded');
    expect(h.probe('demo.slow_read').executions).toBe(2);
    expect(await h.invocation(row.id)).toMatchObject({ status: 'succeeded', attemptNumber: 2 });
  });

  it('a non-idempotent call whose terminal write is refused after the effect is UNCERTAIN for the new owner', async () => {
    const h = scene();
    let b: PipelineWorker | null = null;
    h.probe('demo.external_write').during = async () => {
      if (b === null) b = await h.takeOver('worker-b');
    };
    const request = h.call('demo.external_write', { line: 'sent, then fenced' });
    await expectFenced(h.execute(request));
    h.probe('demo.external_write').during = null;
    expect(await h.outboxLines()).toHaveLength(1);

    const settled = concludedOf(await b!.execute(request));
    expect(settled.invocationStatus).toBe('uncertain');
    expect(settled.item.outcome.reason_code).toBe('tool.outcome_unknown');
    expect(await h.outboxLines()).toHaveLength(1);
  });

  it("a stale worker's recorded denial is refused; the new owner's resubmission records it", async () => {
    const h = scene();
    const b = await h.takeOver('worker-b');
    const request = h.call('demo.external_write', { line: 'no scope' }, { principal: { ...h.principal, scopes: [] } });
    await expectFenced(h.execute(request));
    expect((await h.invocationOfCall(request.callId)).status).toBe('proposed');

    const denied = concludedOf(await b.execute(request));
    expect(denied.item.outcome.reason_code).toBe('policy.scope.missing');
    const row = await h.invocationOfCall(request.callId);
    expect(row).toMatchObject({ status: 'denied', reasonCode: 'policy.scope.missing' });
    expect(eventTypes(await h.eventsOf(row.id))).toEqual(['tool.call.proposed', 'tool.call.denied']);
    // And from then on the recorded row answers.
    expect(JSON.stringify(concludedOf(await b.execute(request)).item)).toBe(JSON.stringify(denied.item));
  });
});
