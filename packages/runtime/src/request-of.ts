import type { ToolCallRequest } from '@veetbot/executor';
import type { Principal, SubmittedCall } from '@veetbot/domain';

export interface StepIdentity {
  readonly tenantId: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly stepNumber: number;
  readonly principal: Principal;
}

/**
 * A pipeline request built from one call of a step's batch. Live submission and the recovery
 * sweep (from the stored batch, read back by stored-batch.ts) both build it from here, so a
 * recovered call derives the same idempotency key as the call it recovers.
 */
export function requestOf(step: StepIdentity, call: SubmittedCall): ToolCallRequest {
  return {
    tenantId: step.tenantId,
    principal: step.principal,
    sessionId: step.sessionId,
    runId: step.runId,
    stepNumber: step.stepNumber,
    callId: call.callId,
    toolName: call.toolName,
    // As the stored form holds it (JSON has no `undefined`), so live and recovered calls agree.
    arguments: call.arguments === undefined ? null : call.arguments,
    origin: call.origin ?? 'model',
    contextTrust: [...call.contextTrust],
    ...(call.argumentTrust === undefined ? {} : { argumentTrust: { ...call.argumentTrust } }),
  };
}
