import type { InvocationRow, PolicyEngine } from '@veetbot/ports';
import type { DurableDeps, RunContext } from '../durable-deps';
import type { AuthorizedCall } from '../pipeline-result';
import type { ToolCallRequest } from '../tool-call-request';
import { evaluatePolicy } from './step-06-evaluate-policy';
import { holdForApproval, type Withheld } from './step-07-request-approval';
import { endWithoutResult } from '../lifecycle/terminal-write';

export type { Withheld };

/**
 * The pre-effect authorization re-check (§ The effect watermark: once per execution attempt, an
 * existing watermark never substitutes for current authority), made of steps 6 and 7 themselves:
 *
 * - policy denies -> DENIED with step 6's code (policy.scope.missing when the policy no longer
 *   offers the advertised tool at all; docs/adr/0023);
 * - policy asks a human -> § ToolExecutionContext: "Unavailable standing authority falls back to
 *   interactive approval". An approval this invocation already holds (it came through step 7, or
 *   an earlier attempt was approved) is the authority; without one the row goes from RUNNING to
 *   WAITING_FOR_APPROVAL with its approval record, exactly as step 7 leaves a new call, and
 *   nothing leaves the platform: no watermark, no tool. The approval re-enters at step 6 as
 *   usual (step 8's rule 5 authorizes the row, step 9 claims it again); a refusal ends it DENIED.
 *
 * Returns null when authority stands. The suspension is written to completion rather than raced
 * against the call deadline: a call that waits for a person is not running out of its own time,
 * and a half-written suspension would leave a pending approval on a row something else ended.
 */
export async function recheckAuthority(
  d: DurableDeps,
  policy: PolicyEngine,
  now: () => Date,
  request: ToolCallRequest,
  call: AuthorizedCall,
  row: InvocationRow,
  run: RunContext,
): Promise<Withheld | null> {
  const tenantId = request.principal.tenant_id;
  const evaluated = evaluatePolicy(policy, call.spec, call.action, call.advertised, request.callId);
  if (!evaluated.ok) {
    const denied = await endWithoutResult(d, tenantId, row, run, now(), 'denied', evaluated.concluded.item.outcome.reason_code);
    return { kind: 'withheld', outcome: denied };
  }
  return holdForApproval(d, tenantId, row, run, now, evaluated.value, call.spec.name, request.callId);
}
