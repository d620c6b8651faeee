export * from './pipeline';
export * from './pipeline-deps';
export * from './pipeline-result';
export * from './pipeline-step';
export * from './tool-call-request';
export { originTrustOf, argumentTrustOf } from './steps/step-06-evaluate-policy';
export * from './durable-deps';
export { ScrubbingCredentialResolver } from './credential-scrubber';
export { renderToolResultItem, type PersistedResult } from './steps/step-14-render-outcome';
export { callBudget, DEFAULT_MINIMUM_CALL_SECONDS, effectiveTimeoutSeconds, remainingRunSeconds, runLeavesTimeForCall, type CallBudget } from './call-budget';
export { toolEvent } from './tool-events';
export { INVALID_TOOL_NAME, displayedToolName } from './displayed-tool-name';
export { TOOL_SPAN_NAMES, EXECUTOR_TRACER_NAME, UNRESOLVED_TOOL_NAME } from './tool-telemetry';
export type { Concluded } from './render-item';
// The invocation lifecycle outside the fourteen steps (docs/adr/0028): the runtime and the api ask these.
export { holdsLiveLease, leaseIsLive } from './lifecycle/lease';
export { recordRefusal, type PlannedDispatch, type Refusal } from './lifecycle/record-refusal';
export { endSuspendedOfCancelledRun, isSuspended, settleRefusedRecovery } from './lifecycle/recovery-endings';
export { everyCallConcluded, outcomeRowsByCall, readStep, type StepReading } from './lifecycle/outcome-rows';
