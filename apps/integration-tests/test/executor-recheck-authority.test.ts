import { describe, expect, it } from 'vitest';
import { StoreError, type PolicyDecision, type Principal, type ProposedAction, type ToolSpec } from '@veetbot/domain';
import type { InvocationStore, PolicyEngine } from '@veetbot/ports';
import { DefaultPolicyEngine, type PolicyProfile } from '@veetbot/policy';
import { concludedOf, drivers, type PipelineHarness } from '../src';
import { eventTypes, expectSixFieldOutcome, usePipelineHarness } from './pipeline-suite';

/**
 * The pre-effect re-check of step 10 and the availability table, on a real database.
 *
 * § ToolExecutionContext: "Unavailable standing authority falls back to interactive approval" —
 * a call step 6 allowed whose re-check now asks for a person waits for one (WAITING_FOR_APPROVAL
 * with its approval record), and nothing leaves the platform before it is decided.
 *
 * § Advertisement is pinned: "Scope revoked, or policy now denies → denied, policy.scope.missing"
 * for a pinned tool the policy no longer offers at all; a deny that depends on the call keeps
 * its rule's code (docs/adr/0023).
 */

/** The operator's profile as it is now: a real DefaultPolicyEngine, replaced when the profile is reloaded. */
class ReloadablePolicy implements PolicyEngine {
  constructor(public current: DefaultPolicyEngine) {}
  evaluate(action: ProposedAction): PolicyDecision {
    return this.current.evaluate(action);
  }
  offers(spec: ToolSpec, principal: Principal): boolean {
    return this.current.offers(spec, principal);
  }
}

const profile = (id: string, rules: PolicyProfile['rules']): DefaultPolicyEngine =>
  new DefaultPolicyEngine({ id, rules, default: { effect: 'allow', reason_code: 'policy.rule.allowed' } });

/** Every send to the outbox asks a person, whatever the turn saw. */
const APPROVE_EVERY_SEND = profile('approve-every-send', [
  {
    id: 'send-needs-approval',
    when: { tools: ['demo.external_write'] },
    effect: 'require_approval',
    reason_code: 'policy.matrix.external_write',
  },
]);
/** The outbox is closed: no call of demo.external_write is allowed, whatever its arguments or trust. */
const OUTBOX_CLOSED = profile('outbox-closed', [
  { id: 'outbox-closed', when: { tools: ['demo.external_write'] }, effect: 'deny', reason_code: 'policy.rule.denied' },
]);
/** Sends are denied only after untrusted content: a deny that depends on the call. */
const NO_SEND_AFTER_UNTRUSTED = profile('no-send-after-untrusted', [
  {
    id: 'no-send-after-untrusted',
    when: { tools: ['demo.external_write'], origin_trust_below: 'user' },
    effect: 'deny',
    reason_code: 'policy.origin.untrusted',
  },
]);

/** Sends are denied below PLATFORM origin: every model call, but still a deny that depends on the call. */
const NO_SEND_BELOW_PLATFORM = profile('no-send-below-platform', [
  {
    id: 'no-send-below-platform',
    when: { tools: ['demo.external_write'], origin_trust_below: 'platform' },
    effect: 'deny',
    reason_code: 'policy.origin.untrusted',
  },
]);

/** The real invocation store, except that every terminal write fails. */
function withFailingComplete(real: InvocationStore): InvocationStore {
  return new Proxy(real, {
    get(target, property, receiver) {
      if (property === 'complete') return async () => Promise.reject(new StoreError('store.connection', 'the database went away'));
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** A worker whose policy is reloaded to `next` as step 10 begins: step 6 answered under the shipped profile. */
async function reloadedBeforeStep10(h: PipelineHarness, next: DefaultPolicyEngine) {
  const policy = new ReloadablePolicy(new DefaultPolicyEngine());
  h.onStep = (step) => {
    if (step === 10) policy.current = next;
  };
  const worker = await h.newWorker('worker-a', { policy });
  return { policy, worker };
}

async function decide(h: PipelineHarness, invocationId: string, decision: 'approved' | 'denied') {
  const approval = await h.stores.approvals.getByInvocation(h.tenantId, invocationId);
  expect(approval?.status).toBe('pending');
  await h.stores.approvals.decide(h.tenantId, approval!.id, { decision, decidedBy: 'approver', decidedAt: h.clock.now() }, []);
}

describe.each(drivers())('step 10 re-check and availability codes (%s)', (driver) => {
  const scene = usePipelineHarness(driver);

  it('a re-check that now requires approval suspends the call: WAITING_FOR_APPROVAL, an approval, nothing sent; approved, it runs once', async () => {
    const h = scene();
    const { policy, worker } = await reloadedBeforeStep10(h, APPROVE_EVERY_SEND);
    const request = h.call('demo.external_write', { line: 'needs a person now' });

    const first = await worker.execute(request);
    expect(first.kind).toBe('approval_required');
    const row = await h.invocationOfCall(request.callId);
    expect(first.kind === 'approval_required' && first.invocationId).toBe(row.id);
    // Nothing left the platform: no watermark, no tool, no outbox line.
    expect(row).toMatchObject({ status: 'waiting_for_approval', effectSentAt: null, reasonCode: null });
    expect(h.probe('demo.external_write').executions).toBe(0);
    expect(await h.outboxLines()).toEqual([]);
    expect(eventTypes(await h.eventsOf(row.id))).toEqual(['tool.call.proposed', 'tool.call.authorized', 'tool.call.started']);
    expect((await h.stores.approvals.getByInvocation(h.tenantId, row.id))?.status).toBe('pending');

    // Resubmitted before anyone decides: the same approval is resumed, still nothing runs.
    h.onStep = null;
    expect((await worker.execute(request)).kind).toBe('approval_required');
    expect(await h.stores.approvals.listPending(h.tenantId, 10)).toHaveLength(1);
    expect(h.probe('demo.external_write').executions).toBe(0);

    await decide(h, row.id, 'approved');
    const ran = concludedOf(await worker.execute(request));
    expect(ran.invocationStatus).toBe('succeeded');
    expect(h.probe('demo.external_write').executions).toBe(1);
    expect(await h.outboxLines()).toEqual([`${row.idempotencyKey}\tneeds a person now`]);
    const done = await h.invocationOfCall(request.callId);
    expect(done).toMatchObject({ id: row.id, status: 'succeeded', reasonCode: 'tool.ok' });
    expect(done.effectSentAt).toBeInstanceOf(Date);
    // The policy still asks at the approved call's own re-check; the approval is the authority.
    expect(policy.current).toBe(APPROVE_EVERY_SEND);

    // A duplicate submit returns the recorded outcome and sends nothing more.
    concludedOf(await worker.execute(request));
    expect(await h.outboxLines()).toHaveLength(1);
  });

  it('the approval refused: DENIED with the rule’s code, nothing ever sent', async () => {
    const h = scene();
    const { worker } = await reloadedBeforeStep10(h, APPROVE_EVERY_SEND);
    const request = h.call('demo.external_write', { line: 'refused' });
    expect((await worker.execute(request)).kind).toBe('approval_required');
    const row = await h.invocationOfCall(request.callId);
    h.onStep = null;
    await decide(h, row.id, 'denied');
    const result = concludedOf(await worker.execute(request));
    expect(result.invocationStatus).toBe('denied');
    expectSixFieldOutcome(result.item, 'policy.matrix.external_write');
    expect(await h.invocationOfCall(request.callId)).toMatchObject({
      status: 'denied',
      reasonCode: 'policy.matrix.external_write',
      effectSentAt: null,
    });
    expect(h.probe('demo.external_write').executions).toBe(0);
    expect(await h.outboxLines()).toEqual([]);
  });

  it('an IDEMPOTENT write whose re-check asks for approval is suspended the same way', async () => {
    const h = scene();
    const idempotent = profile('approve-idempotent-writes', [
      {
        id: 'idem-needs-approval',
        when: { tools: ['demo.idempotent_write'] },
        effect: 'require_approval',
        reason_code: 'policy.approval.denied',
      },
    ]);
    const { worker } = await reloadedBeforeStep10(h, idempotent);
    const request = h.call('demo.idempotent_write', { item: 'later' });
    expect((await worker.execute(request)).kind).toBe('approval_required');
    expect(h.probe('demo.idempotent_write').executions).toBe(0);
    expect(await h.invocationOfCall(request.callId)).toMatchObject({ status: 'waiting_for_approval', effectSentAt: null });
  });

  describe('a row left by a dead worker, re-driven under a profile that now asks a person', () => {
    it('AUTHORIZED (the worker died between steps 8 and 9): it waits for the approval, nothing sent; approved, it runs once', async () => {
      const h = scene();
      const request = h.call('demo.external_write', { line: 'authorized, then the profile changed' });
      h.crashAt = 9;
      await expect(h.execute(request)).rejects.toThrow('simulated crash at step 9');
      h.crashAt = null;
      const left = await h.invocationOfCall(request.callId);
      expect(left.status).toBe('authorized');

      const b = await h.takeOver('worker-b', { policy: APPROVE_EVERY_SEND });
      expect((await b.execute(request)).kind).toBe('approval_required');
      expect(await h.invocation(left.id)).toMatchObject({ status: 'waiting_for_approval', effectSentAt: null });
      expect(h.probe('demo.external_write').executions).toBe(0);
      expect(await h.outboxLines()).toEqual([]);

      await decide(h, left.id, 'approved');
      expect(concludedOf(await b.execute(request)).invocationStatus).toBe('succeeded');
      expect(await h.outboxLines()).toEqual([`${left.idempotencyKey}\tauthorized, then the profile changed`]);
    });

    it('PROPOSED (a refusal whose terminal write never committed): it waits with an approval record to decide', async () => {
      const h = scene();
      const request = h.call('demo.external_write', { line: 'refused, then asked' });
      // The refusal's terminal write fails (the database went away): the row stays PROPOSED.
      const failingComplete = withFailingComplete(h.stores.invocations);
      const refusing = await h.newWorker('worker-a', { policy: OUTBOX_CLOSED, invocations: failingComplete });
      await expect(refusing.execute(request)).rejects.toThrow('the database went away');
      const left = await h.invocationOfCall(request.callId);
      expect(left.status).toBe('proposed');

      const asking = await h.newWorker('worker-a', { policy: APPROVE_EVERY_SEND });
      expect((await asking.execute(request)).kind).toBe('approval_required');
      expect(await h.invocation(left.id)).toMatchObject({ status: 'waiting_for_approval' });
      await decide(h, left.id, 'approved');
      expect(concludedOf(await asking.execute(request)).invocationStatus).toBe('succeeded');
      expect(await h.outboxLines()).toEqual([`${left.idempotencyKey}\trefused, then asked`]);
    });

    it('RUNNING with a NONE side effect (no step-10 re-check): recovery still waits for the approval', async () => {
      const h = scene();
      const request = h.call('math.evaluate', { expression: '6 * 7' });
      h.crashAt = 10;
      await expect(h.execute(request)).rejects.toThrow('simulated crash at step 10');
      h.crashAt = null;
      const left = await h.invocationOfCall(request.callId);
      expect(left.status).toBe('running');

      const askMath = profile('ask-math', [
        { id: 'ask-math', when: { tools: ['math.*'] }, effect: 'require_approval', reason_code: 'policy.approval.denied' },
      ]);
      const b = await h.takeOver('worker-b', { policy: askMath });
      expect((await b.execute(request)).kind).toBe('approval_required');
      expect(await h.invocation(left.id)).toMatchObject({ status: 'waiting_for_approval' });
      expect(h.probe('math.evaluate').executions).toBe(0);

      await decide(h, left.id, 'denied');
      const refused = concludedOf(await b.execute(request));
      expectSixFieldOutcome(refused.item, 'policy.approval.denied');
      expect(h.probe('math.evaluate').executions).toBe(0);
    });
  });

  describe('§ Advertisement is pinned: "policy now denies" is policy.scope.missing', () => {
    it('at step 6: a pinned tool the reloaded profile no longer offers at all', async () => {
      const h = scene();
      // The session pinned demo.external_write under the shipped profile.
      expect(h.pinned.toolNames).toContain('demo.external_write');
      const worker = await h.newWorker('worker-a', { policy: OUTBOX_CLOSED });
      const request = h.call('demo.external_write', { line: 'closed' });
      const result = concludedOf(await worker.execute(request));
      expect(result.invocationStatus).toBe('denied');
      expectSixFieldOutcome(result.item, 'policy.scope.missing');
      expect(await h.invocationOfCall(request.callId)).toMatchObject({ status: 'denied', reasonCode: 'policy.scope.missing' });
      expect(await h.outboxLines()).toEqual([]);
    });

    it('at the step-10 re-check: DENIED policy.scope.missing, never a failure, and nothing sent', async () => {
      const h = scene();
      const { worker } = await reloadedBeforeStep10(h, OUTBOX_CLOSED);
      const request = h.call('demo.external_write', { line: 'closed between' });
      const result = concludedOf(await worker.execute(request));
      expect(result.invocationStatus).toBe('denied');
      expectSixFieldOutcome(result.item, 'policy.scope.missing');
      const row = await h.invocationOfCall(request.callId);
      expect(row).toMatchObject({ status: 'denied', reasonCode: 'policy.scope.missing', effectSentAt: null });
      expect(eventTypes(await h.eventsOf(row.id)).at(-1)).toBe('tool.call.denied');
      expect(h.probe('demo.external_write').executions).toBe(0);
      expect(await h.outboxLines()).toEqual([]);
    });

    it('a deny that depends on the call keeps its rule’s code, at step 6 and at the re-check', async () => {
      const h = scene();
      const worker = await h.newWorker('worker-a', { policy: NO_SEND_AFTER_UNTRUSTED });
      const untrusted = h.call('demo.external_write', { line: 'after a web page' }, { contextTrust: ['user', 'external_untrusted'] });
      const atStep6 = concludedOf(await worker.execute(untrusted));
      expectSixFieldOutcome(atStep6.item, 'policy.origin.untrusted');
      // The same profile still offers the tool: a USER-origin call runs.
      const userAsked = h.call('demo.external_write', { line: 'user asked' });
      expect(concludedOf(await worker.execute(userAsked)).invocationStatus).toBe('succeeded');
      const sent = [`${(await h.invocationOfCall(userAsked.callId)).idempotencyKey}\tuser asked`];

      // Reloaded between step 6 and the re-check to a deny that still depends on the call: its own code.
      const { worker: reloading } = await reloadedBeforeStep10(h, NO_SEND_BELOW_PLATFORM);
      const request = h.call('demo.external_write', { line: 'reloaded' });
      const atRecheck = concludedOf(await reloading.execute(request));
      expect(atRecheck.invocationStatus).toBe('denied');
      expectSixFieldOutcome(atRecheck.item, 'policy.origin.untrusted');
      expect(await h.invocationOfCall(request.callId)).toMatchObject({
        status: 'denied',
        reasonCode: 'policy.origin.untrusted',
        effectSentAt: null,
      });
      expect(await h.outboxLines()).toEqual(sent);
    });

    it('the shipped profile’s own denials keep their codes: an approval refused is policy.matrix.external_write', async () => {
      const h = scene();
      const request = h.call('demo.external_write', { line: 'from a web page' }, { contextTrust: ['external_untrusted'] });
      const waiting = await h.execute(request);
      expect(waiting.kind).toBe('approval_required');
      const row = await h.invocationOfCall(request.callId);
      await decide(h, row.id, 'denied');
      const result = concludedOf(await h.execute(request));
      expectSixFieldOutcome(result.item, 'policy.matrix.external_write');
    });
  });
});
