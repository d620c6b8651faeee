import { isKnownReasonCode, type PolicyDecision } from '@veetbot/domain';
import { concludeWithoutExecution, type Concluded } from '../render-item';

export type ApprovalStepResult = { readonly proceed: true } | { readonly proceed: false; readonly waiting: true } | Concluded;

/**
 * Step 7: when policy asks a human, the call pauses (the durable path writes
 * WAITING_FOR_APPROVAL with its key); an approval re-enters at step 6, so a decision is
 * only honoured if policy still asks for one. A refusal ends DENIED with the rule's code.
 */
export function requestApproval(decision: PolicyDecision, approval: 'approved' | 'denied' | undefined, toolName: string, callId: string): ApprovalStepResult {
  if (decision.effect !== 'require_approval') return { proceed: true };
  if (approval === 'approved') return { proceed: true };
  if (approval === 'denied') {
    const code = isKnownReasonCode(decision.reason_code) ? decision.reason_code : 'policy.approval.denied';
    return concludeWithoutExecution(callId, toolName, code, 'denied');
  }
  return { proceed: false, waiting: true };
}
