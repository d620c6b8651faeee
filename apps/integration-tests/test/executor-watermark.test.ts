import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreError, type PolicyDecision, type ProposedAction } from '@veetbot/domain';
import type { InvocationStore, PolicyEngine, ToolExecutionContext } from '@veetbot/ports';
import { concludedOf, drivers, gate, T0 } from '../src';
import { eventTypes, expectSixFieldOutcome, usePipelineHarness } from './pipeline-suite';

/**
 * § The effect watermark and Hard gate 3 on the durable path: before any tool whose side effect
 * is not NONE, the executor re-checks authority and commits effect_sent_at in its own
 * transaction; the tool starts only after both. Observed from inside the tool: the probe
 * wrapper reads the row through the store before the tool's own code runs.
 */

/** Valid arguments for every registered tool: a new tool without an entry fails the coverage check. */
const SAMPLE_ARGUMENTS: Record<string, Record<string, unknown>> = {
  'math.evaluate': { expression: '1 + 1' },
  'system.time': {},
  'workspace.read_text': { path: 'seed.txt' },
  'workspace.write_text': { path: 'out.txt', text: 'written' },
  'workspace.list': {},
  'demo.external_write': { line: 'watermarked' },
  'demo.slow_read': {},
  'demo.conditional_write': { item: 'x' },
  'demo.idempotent_write': { item: 'x' },
  'demo.huge_output': { bytes: 10 },
  'demo.hostile_failure': { mode: 'success' },
  'demo.throws': {},
  'demo.bad_result': {},
  'demo.secret_echo': { mode: 'success' },
  'demo.schema_output': { valid: true },
};

/** An invocation store whose markEffectSent is replaced; everything else is the real store. */
function withMarkEffectSent(real: InvocationStore, markEffectSent: InvocationStore['markEffectSent']): InvocationStore & { calls: number } {
  const wrapper = Object.create(null) as InvocationStore & { calls: number };
  for (const method of [
    'insertIntent',
    'setWaitingForApproval',
    'authorize',
    'claim',
    'suspend',
    'complete',
    'getById',
    'getByKey',
    'listForRun',
    'findExpiredRunning',
    'findUncertainRepeat',
  ] as const) {
    (wrapper as unknown as Record<string, unknown>)[method] = (real[method] as (...a: unknown[]) => unknown).bind(real);
  }
  wrapper.calls = 0;
  wrapper.markEffectSent = (...args) => {
    wrapper.calls += 1;
    return markEffectSent(...args);
  };
  return wrapper;
}

/** Waits for the call's AbortSignal and records what it carried. */
function awaitAbort(context: ToolExecutionContext, seen: { aborted: boolean; reason: unknown }): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      seen.aborted = context.cancellation.aborted;
      seen.reason = context.cancellation.reason;
      resolve();
    };
    if (context.cancellation.aborted) done();
    else context.cancellation.addEventListener('abort', done, { once: true });
  });
}

describe.each(drivers())('executor effect watermark (%s)', (driver) => {
  const scene = usePipelineHarness(driver);

  it('every side-effecting tool finds effect_sent_at committed when it starts; NONE tools never get one', async () => {
    const h = scene();
    await writeFile(path.join(h.folders.workspace, 'seed.txt'), 'seed', 'utf8');
    const specs = h.registry.list();
    expect(specs.map((s) => s.name).sort()).toEqual(Object.keys(SAMPLE_ARGUMENTS).sort());

    for (const spec of specs) {
      const request = h.call(spec.name, SAMPLE_ARGUMENTS[spec.name]);
      concludedOf(await h.execute(request));
      const start = h.probe(spec.name).last();
      expect(start.rowAtStart?.status, spec.name).toBe('running');
      const row = await h.invocationOfCall(request.callId);
      if (spec.side_effect === 'none') {
        expect(start.rowAtStart?.effectSentAt, spec.name).toBeNull();
        expect(row.effectSentAt, spec.name).toBeNull();
      } else {
        expect(start.rowAtStart?.effectSentAt, spec.name).toBeInstanceOf(Date);
        expect(row.effectSentAt?.getTime(), spec.name).toBe(start.rowAtStart!.effectSentAt!.getTime());
      }
      // The claim (started) precedes the watermark; the terminal event reports it.
      const events = await h.eventsOf(row.id);
      expect(events.find((e) => e.type === 'tool.call.started')?.payload.effect_sent, spec.name).toBe(false);
      expect(events.at(-1)?.payload.effect_sent, spec.name).toBe(spec.side_effect !== 'none');
    }
    // Hard gate 3 names these classes: both kinds are among the side-effecting tools above.
    expect(specs.some((s) => s.idempotency === 'non_idempotent' && s.side_effect !== 'none')).toBe(true);
    expect(specs.some((s) => s.idempotency === 'conditionally_idempotent' && s.side_effect !== 'none')).toBe(true);
  });

  it('a tool that calls markEffectSent twice leaves one timestamp and one watermark write', async () => {
    const h = scene();
    const invocations = withMarkEffectSent(h.stores.invocations, (...args) => h.stores.invocations.markEffectSent(...args));
    const worker = await h.newWorker('worker-a', { invocations });
    // The tool's own marks happen later on the clock than the executor's.
    h.probe('demo.conditional_write').during = async () => {
      h.clock.advance(5_000);
    };
    const request = h.call('demo.conditional_write', { item: 'twice' });
    expect(concludedOf(await worker.execute(request)).invocationStatus).toBe('succeeded');
    expect(invocations.calls).toBe(1);
    const row = await h.invocationOfCall(request.callId);
    expect(row.effectSentAt?.getTime()).toBe(T0.getTime());
  });

  it('a failed watermark write: the tool never starts, FAILED tool.effect_guard_failed', async () => {
    const h = scene();
    const invocations = withMarkEffectSent(h.stores.invocations, async () => {
      throw new StoreError('store.connection', 'the database went away');
    });
    const worker = await h.newWorker('worker-a', { invocations });
    const request = h.call('demo.idempotent_write', { item: 'never' });
    const result = concludedOf(await worker.execute(request));
    expect(result.invocationStatus).toBe('failed');
    expectSixFieldOutcome(result.item, 'tool.effect_guard_failed');
    expect(h.probe('demo.idempotent_write').executions).toBe(0);
    expect(invocations.calls).toBe(1);
    const row = await h.invocationOfCall(request.callId);
    expect(row).toMatchObject({ status: 'failed', reasonCode: 'tool.effect_guard_failed', effectSentAt: null });
  });

  it('a non-idempotent builtin whose watermark fails sends nothing', async () => {
    const h = scene();
    const invocations = withMarkEffectSent(h.stores.invocations, async () => {
      throw new StoreError('store.serialization', 'could not serialize');
    });
    const worker = await h.newWorker('worker-a', { invocations });
    const result = concludedOf(await worker.execute(h.call('demo.external_write', { line: 'must not be sent' })));
    expectSixFieldOutcome(result.item, 'tool.effect_guard_failed');
    expect(h.probe('demo.external_write').executions).toBe(0);
    expect(await h.outboxLines()).toEqual([]);
  });

  it('authority withdrawn by the pre-effect check: the tool never starts, DENIED with the rule’s code (the engine still offers the tool)', async () => {
    const h = scene();
    let evaluations = 0;
    const flipping: PolicyEngine = {
      evaluate(action: ProposedAction): PolicyDecision {
        evaluations += 1;
        // Step 6 allows; the pre-effect re-check (step 10) finds the authority gone.
        return evaluations === 1
          ? h.policy.evaluate(action)
          : { effect: 'deny', reason_code: 'policy.rule.denied', rule_id: 'test.revoked', policy_version: 'test@revoked' };
      },
      offers: (spec, principal) => h.policy.offers(spec, principal),
    };
    const worker = await h.newWorker('worker-a', { policy: flipping });
    const request = h.call('demo.external_write', { line: 'revoked' });
    const result = concludedOf(await worker.execute(request));
    expect(evaluations).toBe(2);
    // docs/adr/0023: a policy deny is DENIED wherever it comes from; executor-recheck-authority covers the rest.
    expect(result.invocationStatus).toBe('denied');
    expectSixFieldOutcome(result.item, 'policy.rule.denied');
    expect(h.probe('demo.external_write').executions).toBe(0);
    expect(await h.outboxLines()).toEqual([]);
    expect((await h.invocationOfCall(request.callId)).effectSentAt).toBeNull();
  });

  it('a stalled watermark write shares the call deadline: FAILED tool.timeout, the tool never starts', async () => {
    const h = scene();
    const stall = gate();
    const invocations = withMarkEffectSent(h.stores.invocations, async () => {
      await stall.opened;
      throw new StoreError('store.cancelled', 'statement cancelled');
    });
    const worker = await h.newWorker('worker-a', { invocations });
    const result = concludedOf(await worker.execute(h.call('demo.idempotent_write', { item: 'stalled' }), { callerTimeoutSeconds: 0.2 }));
    stall.open();
    expectSixFieldOutcome(result.item, 'tool.timeout');
    expect(h.probe('demo.idempotent_write').executions).toBe(0);
  });

  it('a timeout after the watermark of a NON_IDEMPOTENT call is UNCERTAIN tool.outcome_unknown, and the signal fires', async () => {
    const h = scene();
    const seen = { aborted: false, reason: undefined as unknown };
    h.probe('demo.external_write').during = (context) => awaitAbort(context, seen);
    const request = h.call('demo.external_write', { line: 'slow send' });
    const result = concludedOf(await h.execute(request, { callerTimeoutSeconds: 0.2 }));
    expect(result.invocationStatus).toBe('uncertain');
    expectSixFieldOutcome(result.item, 'tool.outcome_unknown');
    expect(result.item.outcome.retryable).toBe(false);
    expect(seen.aborted).toBe(true);
    expect(seen.reason).toBeInstanceOf(Error);
    const row = await h.invocationOfCall(request.callId);
    expect(row).toMatchObject({ status: 'uncertain', reasonCode: 'tool.outcome_unknown' });
    expect(row.effectSentAt).not.toBeNull();
    expect((await h.eventsOf(row.id)).at(-1)).toMatchObject({
      type: 'tool.call.uncertain',
      payload: { effect_sent: true, outcome_status: 'uncertain' },
    });
  });

  it('a timeout of an IDEMPOTENT call is FAILED tool.timeout (retryable), and the signal fires', async () => {
    const h = scene();
    const seen = { aborted: false, reason: undefined as unknown };
    h.probe('demo.idempotent_write').during = (context) => awaitAbort(context, seen);
    const request = h.call('demo.idempotent_write', { item: 'slow' });
    const result = concludedOf(await h.execute(request, { callerTimeoutSeconds: 0.2 }));
    expect(result.invocationStatus).toBe('failed');
    expectSixFieldOutcome(result.item, 'tool.timeout');
    expect(result.item.outcome).toMatchObject({ retryable: true, remediation: 'retry_later' });
    expect(seen.aborted).toBe(true);
    const row = await h.invocationOfCall(request.callId);
    expect(row).toMatchObject({ status: 'failed', reasonCode: 'tool.timeout' });
    expect(eventTypes(await h.eventsOf(row.id)).at(-1)).toBe('tool.call.failed');
  });

  it('a timeout of a NONE tool is FAILED tool.timeout with no watermark', async () => {
    const h = scene();
    const request = h.call('demo.slow_read', { delay_ms: 10_000 });
    const started = Date.now();
    const result = concludedOf(await h.execute(request, { callerTimeoutSeconds: 0.2 }));
    expect(Date.now() - started).toBeLessThan(5_000);
    expectSixFieldOutcome(result.item, 'tool.timeout');
    expect(h.probe('demo.slow_read').last().context.cancellation.aborted).toBe(true);
    expect((await h.invocationOfCall(request.callId)).effectSentAt).toBeNull();
  });

  describe('the effective timeout is min(declared, run deadline remaining, caller limit)', () => {
    it('the declared timeout when it is the smallest', async () => {
      const h = scene();
      concludedOf(await h.execute(h.call('demo.slow_read', {})));
      const context = h.probe('demo.slow_read').last().context;
      expect(context.timeoutSeconds).toBe(5);
      expect(context.deadlineAt.getTime()).toBe(T0.getTime() + 5_000);
    });

    it('what is left of the run when that is the smallest', async () => {
      const h = scene();
      concludedOf(await h.execute(h.call('demo.slow_read', {}), { deadlineAt: new Date(T0.getTime() + 2_000) }));
      const context = h.probe('demo.slow_read').last().context;
      expect(context.timeoutSeconds).toBe(2);
      expect(context.deadlineAt.getTime()).toBe(T0.getTime() + 2_000);
    });

    it("the caller's limit when that is the smallest", async () => {
      const h = scene();
      concludedOf(await h.execute(h.call('demo.slow_read', {}), { callerTimeoutSeconds: 0.5 }));
      const context = h.probe('demo.slow_read').last().context;
      expect(context.timeoutSeconds).toBe(0.5);
      expect(context.deadlineAt.getTime()).toBe(T0.getTime() + 500);
    });

    // It cannot finish (docs/adr/0025): refused with ADR 0020's run.deadline_exceeded, not a
    // timeout of a call that never ran.
    it.each([
      ['under a second from', 999],
      ['at', 0],
      ['past', -1_000],
    ])('a call with the run deadline %s now never starts: FAILED run.deadline_exceeded', async (_label, offset) => {
      const h = scene();
      const request = h.call('demo.idempotent_write', { item: 'too late' });
      const result = concludedOf(await h.execute(request, { deadlineAt: new Date(T0.getTime() + offset) }));
      expectSixFieldOutcome(result.item, 'run.deadline_exceeded');
      expect(h.probe('demo.idempotent_write').executions).toBe(0);
      expect((await h.invocationOfCall(request.callId)).effectSentAt).toBeNull();
    });
  });
});
