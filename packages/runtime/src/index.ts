export { Runtime } from './runtime';
export { DEFAULT_RUNTIME_SETTINGS, MINIMUM_INLINE_BYTES, resolveRuntimeSettings, type RuntimeDeps, type RuntimeSettings } from './runtime-deps';
export { type StepOutcome, type StepSubmission, type SubmittedCall } from './step-submission';
export { checkResubmission, fromStoredBatch, toStoredBatch, type StoredCall, type StoredStepBatch } from './stored-batch';
export type { SweepReport } from './sweep';
export type { RunBudgets } from './run-budgets';
export { RuntimeError, type RuntimeErrorCode } from './runtime-errors';
export { RunAborted } from './run-lease';
export { replayBreaker } from './breaker-replay';
export type { OpenedSession, OpenSessionOptions } from './sessions-and-runs';
export {
  DEFAULT_WORKER_LOOP_SETTINGS,
  resolveWorkerLoopSettings,
  WorkerLoop,
  type WorkerLoopDeps,
  type WorkerLoopEvent,
  type WorkerLoopSettings,
  type WorkerStopReport,
} from './worker-loop';
