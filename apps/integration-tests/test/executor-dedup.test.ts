import { describe, expect, it } from 'vitest';
import type { PipelineResult } from '@veetbot/executor';
import type { ToolCallRequest } from '@veetbot/executor';
import { concludedOf, drivers, gate, SimulatedCrash, until, type PipelineHarness } from '../src';
import { eventTypes, expectSixFieldOutcome, usePipelineHarness } from './pipeline-suite';

/**
 * § Deduplication on the way in: step 8's unique key turns a second submission into one of
 * five rules, never a second execution that nobody asked for. Crashes are simulated by the step
 * hook throwing as a step begins (the worker "dies" there); a new owner then takes the lease
 * over after it expires, exactly as a recovering worker would.
 */
describe.each(drivers())('executor dedup (%s)', (driver) => {
  const scene = usePipelineHarness(driver);

  async function crash(h: PipelineHarness, step: 10 | 11, request: ToolCallRequest): Promise<void> {
    h.crashAt = step;
    await expect(h.execute(request)).rejects.toBeInstanceOf(SimulatedCrash);
    h.crashAt = null;
  }

  describe('rule 2: a terminal row returns its recorded outcome', () => {
    it('a resubmitted external write returns a byte-identical item and sends nothing twice', async () => {
      const h = scene();
      const request = h.call('demo.external_write', { line: 'sent once' });
      const first = concludedOf(await h.execute(request));
      const eventsAfterFirst = (await h.events()).length;
      h.steps.length = 0;

      const again = concludedOf(await h.execute(request));
      expect(JSON.stringify(again.item)).toBe(JSON.stringify(first.item));
      expect(again.invocationStatus).toBe('succeeded');
      // Stopped at step 8: nothing was claimed or executed.
      expect(h.steps).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(h.probe('demo.external_write').executions).toBe(1);
      expect(await h.outboxLines()).toHaveLength(1);
      expect((await h.events()).length).toBe(eventsAfterFirst);

      // The same from another worker that took the run over.
      const b = await h.takeOver('worker-b');
      const fromB = concludedOf(await b.execute(request));
      expect(JSON.stringify(fromB.item)).toBe(JSON.stringify(first.item));
      expect(h.probe('demo.external_write').executions).toBe(1);
      expect(await h.outboxLines()).toHaveLength(1);
      expect((await h.stores.invocations.listForRun(h.tenantId, h.runId)).length).toBe(1);
    });

    it('a resubmitted failure returns the same failure without running the tool again', async () => {
      const h = scene();
      const request = h.call('demo.throws', {});
      const first = concludedOf(await h.execute(request));
      expect(first.invocationStatus).toBe('failed');
      const again = concludedOf(await h.execute(request));
      expect(JSON.stringify(again.item)).toBe(JSON.stringify(first.item));
      expect(h.probe('demo.throws').executions).toBe(1);
    });
  });

  describe('rule 3: a call in flight is a conflict, never a race', () => {
    it('a RUNNING row whose live lease another owner holds: tool.concurrency_conflict, no execution, no write', async () => {
      const h = scene();
      const release = gate();
      h.probe('demo.slow_read').during = () => release.opened;
      const request = h.call('demo.slow_read', { note: 'in flight' });
      const running = h.execute(request);
      await until(() => h.probe('demo.slow_read').executions === 1);
      const eventsWhileRunning = (await h.events()).length;

      // worker-b does not hold the lease (worker-a's is live): it may not touch the row.
      const b = await h.newWorker('worker-b', { fence: { runId: h.runId, fencingToken: 0 } });
      const conflict = concludedOf(await b.execute(request));
      expectSixFieldOutcome(conflict.item, 'tool.concurrency_conflict');
      expect(conflict.item.outcome).toMatchObject({ status: 'failed', retryable: true, remediation: 'retry_later' });
      expect(conflict.invocationStatus).toBe('running');
      expect((await h.events()).length).toBe(eventsWhileRunning);

      release.open();
      expect(concludedOf(await running).invocationStatus).toBe('succeeded');
      expect(h.probe('demo.slow_read').executions).toBe(1);
      const row = await h.invocationOfCall(request.callId);
      expect(row).toMatchObject({ status: 'succeeded', attemptNumber: 1 });
    });

    it('the same key already in flight in this process: conflict before any write', async () => {
      const h = scene();
      const release = gate();
      h.probe('demo.slow_read').during = () => release.opened;
      const request = h.call('demo.slow_read', {});
      const running = h.execute(request);
      await until(() => h.probe('demo.slow_read').executions === 1);
      const eventsWhileRunning = (await h.events()).length;

      const second = concludedOf(await h.execute(request));
      expectSixFieldOutcome(second.item, 'tool.concurrency_conflict');
      expect((await h.events()).length).toBe(eventsWhileRunning);

      release.open();
      expect(concludedOf(await running).invocationStatus).toBe('succeeded');
      expect(h.probe('demo.slow_read').executions).toBe(1);
      // The key left the in-flight set: a later resubmission reads the terminal row (rule 2).
      expect(concludedOf(await h.execute(request)).invocationStatus).toBe('succeeded');
      expect(h.probe('demo.slow_read').executions).toBe(1);
    });
  });

  describe('rule 4: RUNNING with an expired lease runs the recovery table', () => {
    it('READ_ONLY: re-executed as attempt 2', async () => {
      const h = scene();
      const request = h.call('demo.slow_read', {});
      await crash(h, 11, request);
      expect(h.probe('demo.slow_read').executions).toBe(1);
      expect((await h.invocationOfCall(request.callId)).status).toBe('running');

      const b = await h.takeOver('worker-b');
      const recovered = concludedOf(await b.execute(request));
      expect(recovered.invocationStatus).toBe('succeeded');
      expect(h.probe('demo.slow_read').executions).toBe(2);
      const row = await h.invocationOfCall(request.callId);
      expect(row).toMatchObject({ status: 'succeeded', attemptNumber: 2 });
      const events = await h.eventsOf(row.id);
      expect(eventTypes(events)).toEqual([
        'tool.call.proposed',
        'tool.call.authorized',
        'tool.call.started',
        'tool.call.started',
        'tool.call.completed',
      ]);
      expect(events.filter((e) => e.type === 'tool.call.started').map((e) => e.derivationKey.split(':').at(-1))).toEqual(['1', '2']);
    });

    it('IDEMPOTENT with the watermark set: re-executed', async () => {
      const h = scene();
      const request = h.call('demo.idempotent_write', { item: 'x' });
      await crash(h, 11, request);
      const crashed = await h.invocationOfCall(request.callId);
      expect(crashed.effectSentAt).not.toBeNull();

      const b = await h.takeOver('worker-b');
      expect(concludedOf(await b.execute(request)).invocationStatus).toBe('succeeded');
      expect(h.probe('demo.idempotent_write').executions).toBe(2);
      expect((await h.invocationOfCall(request.callId)).attemptNumber).toBe(2);
    });

    it('CONDITIONALLY_IDEMPOTENT with the watermark set: replayed with the same key', async () => {
      const h = scene();
      const request = h.call('demo.conditional_write', { item: 'replay me' });
      await crash(h, 11, request);
      const crashed = await h.invocationOfCall(request.callId);
      expect(crashed.effectSentAt).not.toBeNull();

      const b = await h.takeOver('worker-b');
      const replayed = concludedOf(await b.execute(request));
      expect(replayed.invocationStatus).toBe('succeeded');
      const probe = h.probe('demo.conditional_write');
      expect(probe.executions).toBe(2);
      // § The key: passed verbatim, the same 64 hex digits on the replay.
      expect(probe.starts[1]!.context.idempotencyKey).toBe(probe.starts[0]!.context.idempotencyKey);
      expect(probe.starts[1]!.context.idempotencyKey).toBe(crashed.idempotencyKey);
      expect(probe.starts[1]!.context.attemptNumber).toBe(2);
      expect(replayed.item.structured).toEqual({ idempotency_key: crashed.idempotencyKey });
      // The existing watermark is retained, never rewritten.
      const row = await h.invocationOfCall(request.callId);
      expect(row.effectSentAt?.getTime()).toBe(crashed.effectSentAt!.getTime());
    });

    it('CONDITIONALLY_IDEMPOTENT with no watermark: re-executed (nothing was sent)', async () => {
      const h = scene();
      const request = h.call('demo.conditional_write', { item: 'never sent' });
      await crash(h, 10, request);
      const crashed = await h.invocationOfCall(request.callId);
      expect(crashed).toMatchObject({ status: 'running', effectSentAt: null });
      expect(h.probe('demo.conditional_write').executions).toBe(0);

      const b = await h.takeOver('worker-b');
      expect(concludedOf(await b.execute(request)).invocationStatus).toBe('succeeded');
      expect(h.probe('demo.conditional_write').executions).toBe(1);
      expect((await h.invocationOfCall(request.callId)).attemptNumber).toBe(2);
    });

    it('NON_IDEMPOTENT with the watermark set: UNCERTAIN tool.outcome_unknown, never re-sent', async () => {
      const h = scene();
      const request = h.call('demo.external_write', { line: 'maybe sent' });
      await crash(h, 11, request);
      expect(await h.outboxLines()).toHaveLength(1);
      expect((await h.invocationOfCall(request.callId)).effectSentAt).not.toBeNull();

      const b = await h.takeOver('worker-b');
      const uncertain = concludedOf(await b.execute(request));
      expect(uncertain.invocationStatus).toBe('uncertain');
      expectSixFieldOutcome(uncertain.item, 'tool.outcome_unknown');
      expect(uncertain.item.outcome).toMatchObject({ status: 'uncertain', retryable: false, remediation: 'none' });
      expect(h.probe('demo.external_write').executions).toBe(1);
      expect(await h.outboxLines()).toHaveLength(1);
      const row = await h.invocationOfCall(request.callId);
      expect(row).toMatchObject({ status: 'uncertain', outcomeStatus: 'uncertain', reasonCode: 'tool.outcome_unknown' });
      expect(eventTypes(await h.eventsOf(row.id)).at(-1)).toBe('tool.call.uncertain');

      // And it stays that way: a further resubmission reads the terminal row.
      const again = concludedOf(await b.execute(request));
      expect(JSON.stringify(again.item)).toBe(JSON.stringify(uncertain.item));
      expect(await h.outboxLines()).toHaveLength(1);
    });

    it('NON_IDEMPOTENT with no watermark: re-executed once (nothing was sent)', async () => {
      const h = scene();
      const request = h.call('demo.external_write', { line: 'not yet sent' });
      await crash(h, 10, request);
      expect(await h.outboxLines()).toHaveLength(0);

      const b = await h.takeOver('worker-b');
      expect(concludedOf(await b.execute(request)).invocationStatus).toBe('succeeded');
      expect(await h.outboxLines()).toHaveLength(1);
      expect(h.probe('demo.external_write').executions).toBe(1);
    });

    it('a call that keeps crashing its worker ends FAILED tool.recovery_exhausted at maximumAttempts', async () => {
      const h = scene();
      const request = h.call('demo.slow_read', {});
      let worker = h.worker;
      for (let attempt = 1; attempt <= 5; attempt++) {
        h.crashAt = 11;
        await expect(worker.execute(request)).rejects.toBeInstanceOf(SimulatedCrash);
        h.crashAt = null;
        expect((await h.invocationOfCall(request.callId)).attemptNumber).toBe(attempt);
        worker = await h.takeOver(`worker-${attempt + 1}`);
      }
      const exhausted = concludedOf(await worker.execute(request));
      expectSixFieldOutcome(exhausted.item, 'tool.recovery_exhausted');
      expect(h.probe('demo.slow_read').executions).toBe(5);
    });
  });

  describe('rule 5: WAITING_FOR_APPROVAL resumes the same approval', () => {
    // The turn saw untrusted content: the default profile asks approval for an external write.
    const untrusted = { contextTrust: ['external_untrusted' as const] };

    async function waiting(h: PipelineHarness, line: string) {
      const request = h.call('demo.external_write', { line }, untrusted);
      const result: PipelineResult = await h.execute(request);
      if (result.kind !== 'approval_required') throw new Error(`expected approval_required, got ${result.kind}`);
      expect(result.invocationId).toBeDefined();
      const row = await h.invocation(result.invocationId!);
      expect(row.status).toBe('waiting_for_approval');
      const approval = await h.stores.approvals.getByInvocation(h.tenantId, row.id);
      expect(approval?.status).toBe('pending');
      expect(h.probe('demo.external_write').executions).toBe(0);
      expect(eventTypes(await h.eventsOf(row.id))).toEqual(['tool.call.proposed']);
      return { request, row, approval: approval! };
    }

    it('approved: the resubmission executes once; later ones return the recorded outcome', async () => {
      const h = scene();
      const { request, row, approval } = await waiting(h, 'approved line');
      await h.stores.approvals.decide(
        h.tenantId,
        approval.id,
        { decision: 'approved', decidedBy: 'approver-1', decidedAt: h.clock.now() },
        [],
      );

      const executed = concludedOf(await h.execute(request));
      expect(executed.invocationStatus).toBe('succeeded');
      expect(await h.outboxLines()).toHaveLength(1);
      expect((await h.invocation(row.id)).status).toBe('succeeded');
      expect(eventTypes(await h.eventsOf(row.id))).toEqual([
        'tool.call.proposed',
        'tool.call.authorized',
        'tool.call.started',
        'tool.call.completed',
      ]);

      const again = concludedOf(await h.execute(request));
      expect(JSON.stringify(again.item)).toBe(JSON.stringify(executed.item));
      expect(await h.outboxLines()).toHaveLength(1);
      expect(h.probe('demo.external_write').executions).toBe(1);
    });

    it('denied: DENIED with the rule code, nothing executed', async () => {
      const h = scene();
      const { request, row, approval } = await waiting(h, 'denied line');
      await h.stores.approvals.decide(
        h.tenantId,
        approval.id,
        { decision: 'denied', decidedBy: 'approver-1', decidedAt: h.clock.now() },
        [],
      );

      const denied = concludedOf(await h.execute(request));
      expect(denied.invocationStatus).toBe('denied');
      expectSixFieldOutcome(denied.item, 'policy.matrix.external_write');
      expect(denied.item.outcome.status).toBe('denied');
      expect(await h.outboxLines()).toHaveLength(0);
      expect(h.probe('demo.external_write').executions).toBe(0);
      expect(await h.invocation(row.id)).toMatchObject({ status: 'denied', reasonCode: 'policy.matrix.external_write' });
      expect(eventTypes(await h.eventsOf(row.id))).toEqual(['tool.call.proposed', 'tool.call.denied']);
    });

    it('still pending: approval_required again, the same invocation, still one approval', async () => {
      const h = scene();
      const { request, row, approval } = await waiting(h, 'pending line');
      const again = await h.execute(request);
      expect(again.kind).toBe('approval_required');
      if (again.kind === 'approval_required') expect(again.invocationId).toBe(row.id);
      const pending = (await h.stores.approvals.listPending(h.tenantId, 100)).filter((a) => a.invocationId === row.id);
      expect(pending.map((a) => a.id)).toEqual([approval.id]);
      expect((await h.stores.invocations.listForRun(h.tenantId, h.runId)).length).toBe(1);
      expect(h.probe('demo.external_write').executions).toBe(0);
      expect(eventTypes(await h.eventsOf(row.id))).toEqual(['tool.call.proposed']);
    });

    it('the caller cannot approve its own call: an approval claimed in the request is ignored', async () => {
      const h = scene();
      const { request, row } = await waiting(h, 'self approved');
      const claimed = await h.execute({ ...request, approval: 'approved' });
      expect(claimed.kind).toBe('approval_required');
      expect((await h.invocation(row.id)).status).toBe('waiting_for_approval');
      expect(await h.outboxLines()).toHaveLength(0);
    });
  });

  describe('calls concluded before step 8 are recorded as terminal rows', () => {
    it('a denial (missing scope) is a DENIED row; resubmission returns it', async () => {
      const h = scene();
      const request = h.call('demo.external_write', { line: 'no scope' }, { principal: { ...h.principal, scopes: ['workspace.read'] } });
      const denied = concludedOf(await h.execute(request));
      expectSixFieldOutcome(denied.item, 'policy.scope.missing');
      const row = await h.invocationOfCall(request.callId);
      expect(row).toMatchObject({
        status: 'denied',
        outcomeStatus: 'denied',
        reasonCode: 'policy.scope.missing',
        startedAt: null,
        effectSentAt: null,
      });
      expect(eventTypes(await h.eventsOf(row.id))).toEqual(['tool.call.proposed', 'tool.call.denied']);

      const again = concludedOf(await h.execute(request));
      expect(JSON.stringify(again.item)).toBe(JSON.stringify(denied.item));
      expect((await h.stores.invocations.listForRun(h.tenantId, h.runId)).length).toBe(1);
      expect(h.probe('demo.external_write').executions).toBe(0);
    });

    it('an unknown tool is a DENIED row with version unresolved; resubmission returns it', async () => {
      const h = scene();
      const request = h.call('demo.does_not_exist', { any: 'thing' });
      const denied = concludedOf(await h.execute(request));
      expectSixFieldOutcome(denied.item, 'policy.matrix.unknown_tool');
      const row = await h.invocationOfCall(request.callId);
      // Kept as received, marked unvalidated (docs/adr/0020).
      expect(row).toMatchObject({
        status: 'denied',
        toolVersion: 'unresolved',
        idempotencyClass: 'non_idempotent',
        arguments: { $unvalidated: { received: { any: 'thing' }, truncated: false } },
      });
      const again = concludedOf(await h.execute(request));
      expect(JSON.stringify(again.item)).toBe(JSON.stringify(denied.item));
    });

    it('invalid arguments are a FAILED row keeping them marked unvalidated, in no event; resubmission returns it', async () => {
      const h = scene();
      const request = h.call('demo.external_write', { line: 42, extra: 'invalid-arg-sentinel' });
      const failed = concludedOf(await h.execute(request));
      expect(failed.invocationStatus).toBe('failed');
      expectSixFieldOutcome(failed.item, 'tool.arguments_invalid');
      const row = await h.invocationOfCall(request.callId);
      expect(row).toMatchObject({
        status: 'failed',
        reasonCode: 'tool.arguments_invalid',
        arguments: { $unvalidated: { received: { line: 42, extra: 'invalid-arg-sentinel' }, truncated: false, tool_name: null } },
        startedAt: null,
      });
      // The model is never shown the value, nor is any event.
      expect(JSON.stringify(failed.item)).not.toContain('invalid-arg-sentinel');
      expect(JSON.stringify(await h.eventsOf(row.id))).not.toContain('invalid-arg-sentinel');
      expect(eventTypes(await h.eventsOf(row.id))).toEqual(['tool.call.proposed', 'tool.call.failed']);

      const again = concludedOf(await h.execute(request));
      expect(JSON.stringify(again.item)).toBe(JSON.stringify(failed.item));
      expect(h.probe('demo.external_write').executions).toBe(0);
      expect(await h.outboxLines()).toHaveLength(0);
    });
  });
});
