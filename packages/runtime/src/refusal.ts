import { isTerminalInvocationStatus, type ToolResultItem } from '@veetbot/domain';
import { completeWithoutResult } from './complete-row';
import {
  concludeWithoutExecution,
  intentRow,
  keyOf,
  recordConclusion,
  renderToolResultItem,
  toolEvent,
  type AuthorizedCall,
  type DurableDeps,
  type RefusedCall,
  type RunContext,
  type ToolCallRequest,
} from '@veetbot/executor';
import type { InvocationRow, InvocationStore, TerminalInvocationStatus } from '@veetbot/ports';

export interface Refusal {
  readonly status: Extract<TerminalInvocationStatus, 'denied' | 'failed'>;
  /**
   * policy.breaker.uncertain_repeat, tool.loop_detected, tool.run_cancelled (the breakers),
   * tool.budget_exhausted, run.deadline_exceeded (docs/adr/0020).
   */
  readonly reasonCode: string;
}

/**
 * A call the runtime refuses before dispatch (§ The circuit breakers) never reaches the
 * pipeline, but it is a fact of the run: it is recorded as a terminal row under the key the
 * pipeline would derive for it, with tool.call.proposed and tool.call.denied/.failed, so the
 * audit trail shows it, the breaker replay counts it, and a resubmitted step returns the same
 * outcome (the pipeline's step 8 dedups to this row).
 *
 * Returns null when the key is held by a RUNNING row: something may already have executed
 * under it, and only the pipeline's recovery table may decide what it became.
 */
export async function recordRefusal(
  invocations: InvocationStore,
  now: Date,
  request: ToolCallRequest,
  call: Pick<AuthorizedCall, 'spec' | 'argumentsHash' | 'arguments' | 'originTrust'>,
  run: RunContext,
  refusal: Refusal,
): Promise<ToolResultItem | null> {
  const tenantId = request.principal.tenant_id;
  const key = keyOf(request, call);
  const row = intentRow(request, call, run, key, 'proposed', now);
  const inserted = await invocations.insertIntent(tenantId, row, [toolEvent('tool.call.proposed', { ...row, attemptNumber: 1 }, now)]);
  let target: InvocationRow;
  if (inserted.inserted) {
    target = inserted.row;
  } else {
    const existing = inserted.existing;
    if (isTerminalInvocationStatus(existing.status)) return renderToolResultItem(existing);
    if (existing.status === 'running') return null;
    // PROPOSED, AUTHORIZED or WAITING_FOR_APPROVAL from an earlier submission of this step:
    // nothing ran, and the breaker now forbids it from running.
    target = existing;
  }
  const completed = await completeWithoutResult(invocations, tenantId, target, run.fence, now, refusal.status, refusal.reasonCode);
  return renderToolResultItem(completed);
}

/**
 * The same refusal for a call steps 1–7 would themselves refuse (unknown tool, invalid
 * arguments, a policy deny): recorded by the pipeline's own recordConclusion, under the key
 * and with the (unvalidated) arguments the pipeline would record, so its row is the row the
 * pipeline would have written but for the reason code.
 */
export async function recordRefusalOfRefused(durable: DurableDeps, now: Date, request: ToolCallRequest, refused: RefusedCall, run: RunContext, refusal: Refusal): Promise<ToolResultItem> {
  const concluded = concludeWithoutExecution(request.callId, refused.toolName, refusal.reasonCode, refusal.status);
  return (await recordConclusion(durable, now, request, run, concluded, refused)).item;
}
