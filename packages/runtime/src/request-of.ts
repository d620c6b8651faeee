import type { ToolCallRequest } from '@veetbot/executor';
import type { Principal } from '@veetbot/domain';
import type { StoredCall } from './step-submission';

export interface StepIdentity {
  readonly tenantId: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly stepNumber: number;
  readonly principal: Principal;
}

/**
 * A pipeline request built from the stored form of a call. Live submission and the recovery
 * sweep both build it from here, so a recovered call derives the same idempotency key as the
 * call it recovers.
 */
export function requestOf(step: StepIdentity, call: StoredCall): ToolCallRequest {
  return {
    tenantId: step.tenantId,
    principal: step.principal,
    sessionId: step.sessionId,
    runId: step.runId,
    stepNumber: step.stepNumber,
    callId: call.call_id,
    toolName: call.tool_name,
    arguments: call.arguments,
    origin: call.origin,
    contextTrust: call.context_trust,
    ...(call.argument_trust === undefined ? {} : { argumentTrust: call.argument_trust }),
  };
}
