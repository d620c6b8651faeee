/**
 * § The pipeline: the fourteen steps, by number and name. Observers record the sequence a
 * call traversed (Hard gate 11 compares an MCP call's sequence with a builtin's), and the
 * crash tests hook each step (Hard gate 7).
 */
export const PIPELINE_STEPS = {
  1: 'resolve_tool',
  2: 'check_enabled',
  3: 'check_scopes',
  4: 'validate_arguments',
  5: 'normalize_arguments',
  6: 'evaluate_policy',
  7: 'request_approval',
  8: 'persist_intent',
  9: 'claim',
  10: 'execute',
  11: 'validate_result',
  12: 'truncate_or_artifactize',
  13: 'persist_result',
  14: 'render_outcome',
} as const;

export type PipelineStepNumber = keyof typeof PIPELINE_STEPS;
export type PipelineStepName = (typeof PIPELINE_STEPS)[PipelineStepNumber];

export interface PipelineHooks {
  /** Called as each step begins. May be async (crash tests kill the process here). */
  onStep?(step: PipelineStepNumber, name: PipelineStepName): void | Promise<void>;
}
