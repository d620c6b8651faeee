import type { SuspendedKind, ToolResultItem } from '@veetbot/domain';

/** One model step's batch, as the agent loop submits it: the domain's (docs/adr/0032). */
export type { StepSubmission, SubmittedCall } from '@veetbot/domain';

export interface StepOutcome {
  readonly stepNumber: number;
  /**
   * One per call that concluded, in submission order. A call waiting for approval has no
   * outcome yet: it is listed in `pendingApprovals` instead and gets its item when the step is
   * resubmitted after the decision (§ Parallel calls: the step ends only when every call has
   * a terminal row).
   */
  readonly items: readonly ToolResultItem[];
  readonly pendingApprovals: readonly { callId: string; invocationId: string }[];
  /**
   * § Control tools: calls that suspended — conversation.ask_user (`user_input`, the ref is the
   * question id; the run is now WAITING_FOR_USER) and delegate.run (`child_run`, the ref is the
   * child run's id). Each gets its item when the answer or the child's result completes it.
   */
  readonly suspended: readonly { callId: string; invocationId: string; kind: SuspendedKind; ref: string }[];
  readonly mode: 'parallel' | 'sequential';
  /** ADR-0136: the next model turn is synthesis-only (answer from retained evidence). */
  readonly synthesisOnly: boolean;
  /** The breaker or the deadline stopped the run: it is now `failed` (docs/adr/0020). */
  readonly runFailed: 'tool_policy_denied' | 'tool_loop_detected' | 'deadline_exceeded' | null;
}
