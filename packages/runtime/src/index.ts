export { Runtime } from './runtime';
export { resolveRuntimeSettings, type RuntimeSettings } from './runtime-deps';
export type { StepOutcome, StepSubmission, SubmittedCall } from './step-submission';
export { checkResubmission, fromStoredBatch, toStoredBatch } from './stored-batch';
export type { SweepReport } from './sweep';
export { RuntimeError } from './runtime-errors';
export { replayBreaker } from './breaker-replay';
export { WorkerLoop, type WorkerLoopEvent, type WorkerLoopSettings } from './worker-loop';
