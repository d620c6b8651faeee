import { describe, expect, it } from 'vitest';
import type { PolicyDecision, Principal, ProposedAction, ToolSpec } from '@veetbot/domain';
import type { PolicyEngine } from '@veetbot/ports';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { drivers } from '../src';
import {
  dieAt,
  neverReleases,
  RUNTIME_LEASE_TTL_MS,
  useRuntimeScene,
  userCall,
  WorkerDied,
  type RuntimeScene,
  type RuntimeTestTool,
} from './runtime-harness';

/**
 * § ToolExecutionContext: "Unavailable standing authority falls back to interactive approval",
 * on the recovery path (§ The effect watermark: "Recovery re-runs the pre-effect authorization
 * check once per execution attempt"). A worker dies holding a RUNNING row; by the time the sweep
 * re-drives it the operator's profile asks a person for that tool. The recovered attempt must
 * wait for the approval — nothing runs — and once approved the step's resubmission runs it once.
 */

/** The operator's profile as it is now: a real DefaultPolicyEngine, replaced on reload. */
class ReloadablePolicy implements PolicyEngine {
  constructor(public current: DefaultPolicyEngine) {}
  evaluate(action: ProposedAction): PolicyDecision {
    return this.current.evaluate(action);
  }
  offers(spec: ToolSpec, principal: Principal): boolean {
    return this.current.offers(spec, principal);
  }
}

const APPROVE_RUNTIME_WRITES = new DefaultPolicyEngine({
  id: 'approve-runtime-writes',
  rules: [
    {
      id: 'rt-writes-need-approval',
      when: { tools: ['demo.*'], side_effects: ['external_write'] },
      effect: 'require_approval',
      reason_code: 'policy.matrix.external_write',
    },
  ],
  default: { effect: 'allow', reason_code: 'policy.rule.allowed' },
});

/** Worker A takes step 1 under the shipped profile and dies at `step`, leaving the call RUNNING. */
async function deadWorker(s: RuntimeScene, runId: string, tool: RuntimeTestTool, policy: PolicyEngine, step: 10 | 11): Promise<void> {
  const workerA = s.worker('worker-a', { hooks: dieAt(step), stores: neverReleases(s.stores), policy });
  await expect(workerA.submitStep(s.step(runId, 1, [userCall('call-1', tool, { n: 1 })]))).rejects.toBeInstanceOf(WorkerDied);
}

describe.each(drivers())('recovery re-check falls back to approval (%s)', (driver) => {
  const scene = useRuntimeScene(driver);

  it.each([
    // No watermark: nothing was sent, the recovery table says re-execute.
    { tool: 'demo.rt_non_idempotent', step: 10 },
    // Watermark set on a conditionally idempotent call: the table says replay with the same key.
    { tool: 'demo.rt_conditional', step: 11 },
  ] as const)('$tool left RUNNING at step $step: the sweep suspends it for approval; approved, it runs once', async ({ tool, step }) => {
    const s = scene();
    const policy = new ReloadablePolicy(new DefaultPolicyEngine());
    const { runId } = await s.openRun();
    await deadWorker(s, runId, tool, policy, step);
    const [left] = await s.stores.invocations.listForRun(s.tenantId, runId);
    expect(left).toMatchObject({ status: 'running', attemptNumber: 1 });
    const executionsBefore = s.probes[tool].executions;

    // The operator reloads the profile; the dead worker's lease expires; the sweep re-drives the row.
    policy.current = APPROVE_RUNTIME_WRITES;
    s.clock.advance(RUNTIME_LEASE_TTL_MS + 1);
    const report = await s.worker('worker-b', { policy }).sweep();
    expect(report).toMatchObject({ examined: 1, recovered: 0, uncertain: 0, failed: 0 });

    // Nothing ran: the row waits for a person, with its approval, its watermark as it was.
    expect(s.probes[tool].executions).toBe(executionsBefore);
    const waiting = await s.stores.invocations.getById(s.tenantId, left!.id);
    expect(waiting).toMatchObject({ status: 'waiting_for_approval', idempotencyKey: left!.idempotencyKey });
    expect(waiting!.effectSentAt?.getTime() ?? null).toBe(left!.effectSentAt?.getTime() ?? null);
    const approval = await s.stores.approvals.getByInvocation(s.tenantId, left!.id);
    expect(approval).toMatchObject({ status: 'pending', runId });
    // The step is not over while the call waits.
    expect((await s.stores.steps.get(s.tenantId, runId, 1))?.status).not.toBe('completed');
    // Another sweep finds nothing to recover: a waiting row is not RUNNING.
    expect((await s.worker('worker-b', { policy }).sweep()).examined).toBe(0);

    await s.stores.approvals.decide(
      s.tenantId,
      approval!.id,
      { decision: 'approved', decidedBy: 'approver', decidedAt: s.clock.now() },
      [],
    );
    // Approval re-enters at step 6: the step is resubmitted (as the API's decide route re-queues it).
    await s.worker('worker-c', { policy }).submitStep(s.step(runId, 1, [userCall('call-1', tool, { n: 1 })]));
    const probe = s.probes[tool];
    expect(probe.executions).toBe(executionsBefore + 1);
    expect(probe.starts.at(-1)!.context.idempotencyKey).toBe(left!.idempotencyKey);
    expect(await s.stores.invocations.getById(s.tenantId, left!.id)).toMatchObject({ status: 'succeeded', reasonCode: 'tool.ok' });
    expect((await s.stores.steps.get(s.tenantId, runId, 1))?.status).toBe('completed');
  });

  it('the approval refused: the recovered call ends DENIED and never runs again', async () => {
    const s = scene();
    const policy = new ReloadablePolicy(new DefaultPolicyEngine());
    const { runId } = await s.openRun();
    await deadWorker(s, runId, 'demo.rt_idempotent', policy, 10);
    policy.current = APPROVE_RUNTIME_WRITES;
    s.clock.advance(RUNTIME_LEASE_TTL_MS + 1);
    await s.worker('worker-b', { policy }).sweep();
    const [row] = await s.stores.invocations.listForRun(s.tenantId, runId);
    const approval = await s.stores.approvals.getByInvocation(s.tenantId, row!.id);
    await s.stores.approvals.decide(s.tenantId, approval!.id, { decision: 'denied', decidedBy: 'approver', decidedAt: s.clock.now() }, []);
    await s.worker('worker-c', { policy }).submitStep(s.step(runId, 1, [userCall('call-1', 'demo.rt_idempotent', { n: 1 })]));
    expect(s.probes['demo.rt_idempotent'].executions).toBe(0);
    expect(await s.stores.invocations.getById(s.tenantId, row!.id)).toMatchObject({
      status: 'denied',
      reasonCode: 'policy.matrix.external_write',
    });
  });
});
