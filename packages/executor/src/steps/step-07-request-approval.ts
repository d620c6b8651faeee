import { isKnownReasonCode, type PolicyDecision } from '@veetbot/domain';
import type { ApprovalRow, InvocationRow } from '@veetbot/ports';
import type { DurableDeps, RunContext } from '../durable-deps';
import { concludeWithoutExecution, type Concluded } from '../render-item';
import { endWithoutResult, type Terminated } from '../lifecycle/terminal-write';

export type ApprovalStepResult = { readonly proceed: true } | { readonly proceed: false; readonly waiting: true } | Concluded;

/**
 * Step 7: when policy asks a human, the call pauses (the durable path writes
 * WAITING_FOR_APPROVAL with its key); an approval re-enters at step 6, so a decision is
 * only honoured if policy still asks for one. A refusal ends DENIED with the rule's code.
 */
export function requestApproval(
  decision: PolicyDecision,
  approval: 'approved' | 'denied' | undefined,
  toolName: string,
  callId: string,
): ApprovalStepResult {
  if (decision.effect !== 'require_approval') return { proceed: true };
  if (approval === 'approved') return { proceed: true };
  if (approval === 'denied') {
    const code = isKnownReasonCode(decision.reason_code) ? decision.reason_code : 'policy.approval.denied';
    return concludeWithoutExecution(callId, toolName, code, 'denied');
  }
  return { proceed: false, waiting: true };
}

/**
 * Step 7 held an existing row (step 8's dedup, step 10's re-check): the row is DENIED, or it
 * waits for an approval (WAITING_FOR_APPROVAL with its approval record).
 */
export type Withheld =
  | { readonly kind: 'withheld'; readonly outcome: Terminated }
  | { readonly kind: 'withheld'; readonly outcome: { readonly kind: 'approval_required'; readonly row: InvocationRow } };

/**
 * An approval record's decision as step 7 reads it; a pending (or expired) record decides
 * nothing, and neither does one decided under another policy version: a decision binds to the
 * version that asked (docs/adr/0047), so a changed policy asks again.
 */
export function decisionOf(approval: ApprovalRow | null, decision: PolicyDecision): 'approved' | 'denied' | undefined {
  if (approval === null || approval.policyVersion !== decision.policy_version) return undefined;
  return approval.status === 'approved' || approval.status === 'denied' ? approval.status : undefined;
}

/**
 * Step 7 for a row that already exists (AUTHORIZED, RUNNING under the recovery table, or
 * WAITING_FOR_APPROVAL with an approval asked under another policy version): when
 * `decision` asks a person, the approval this invocation holds decides — approved proceeds (null),
 * denied ends the row DENIED with the rule's code — and without a decided one the row waits for
 * it: WAITING_FOR_APPROVAL and its approval record in one transaction, as step 8 writes a new
 * call's (docs/adr/0023). Any other decision: null.
 */
export async function holdForApproval(
  d: DurableDeps,
  tenantId: string,
  row: InvocationRow,
  run: RunContext,
  now: () => Date,
  decision: PolicyDecision,
  toolName: string,
  callId: string,
): Promise<Withheld | null> {
  if (decision.effect !== 'require_approval') return null;
  const approvalStep = requestApproval(
    decision,
    decisionOf(await d.approvals.getByInvocation(tenantId, row.id), decision),
    toolName,
    callId,
  );
  if ('kind' in approvalStep) {
    const denied = await endWithoutResult(d, tenantId, row, run, now(), 'denied', approvalStep.item.outcome.reason_code);
    return { kind: 'withheld', outcome: denied };
  }
  if (approvalStep.proceed) return null;
  // The row records the decision that asked; an approval decided under another version re-opens.
  const policy = { version: decision.policy_version, ruleId: decision.rule_id };
  const waiting = await d.invocations.setWaitingForApproval(tenantId, row.id, run.fence, now(), policy, []);
  return { kind: 'withheld', outcome: { kind: 'approval_required', row: waiting.row } };
}
