export { Runtime } from './runtime';
export type { RuntimeSettings } from './runtime-deps';
export {
  StoredStepBatch,
  toStoredBatch,
  type StepOutcome,
  type StepSubmission,
  type SubmittedCall,
} from './step-submission';
export { RuntimeError } from './runtime-errors';
export { replayBreaker } from './breaker-replay';
export { WorkerLoop, type WorkerLoopEvent, type WorkerLoopSettings } from './worker-loop';
