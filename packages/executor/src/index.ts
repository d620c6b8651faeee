export { parseToolCallRequest, executeToolCall } from './pipeline';
export { DEFAULT_PIPELINE_LIMITS, type PipelineDeps, type SessionView } from './pipeline-deps';
export type { AuthorizedCall, RefusedCall, PipelineResult } from './pipeline-result';
export type { PipelineStepNumber, PipelineHooks } from './pipeline-step';
export { ToolCallRequest } from './tool-call-request';
export type { DurableDeps, RunContext } from './durable-deps';
export { renderToolResultItem } from './steps/step-14-render-outcome';
export { runLeavesTimeForCall } from './call-budget';
export { INVALID_TOOL_NAME } from './displayed-tool-name';
// The invocation lifecycle outside the fourteen steps (docs/adr/0028): the runtime and the api ask these.
export { recordRefusal, type Refusal } from './lifecycle/record-refusal';
export { endSuspendedOfCancelledRun, settleRefusedRecovery } from './lifecycle/recovery-endings';
export { completeSuspended, endSuspended, isSuspended, SUSPENSION_EVENT_TYPES } from './lifecycle/suspension';
export { everyCallConcluded, outcomeRowsByCall, readStep } from './lifecycle/outcome-rows';
