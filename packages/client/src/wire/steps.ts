import { z } from 'zod';
import { SuspendedKind, ToolResultItem, TrustLevel } from '@veetbot/domain';
import { RunStatus } from './runs';

/** The most a step submission may wait for its outcomes before answering 202. */
export const MAXIMUM_WAIT_SECONDS = 30;

/** One tool call of the model's step, as the provider emitted it. */
export const SubmittedCall = z
  .object({
    /** The provider's call id: unique within the step. */
    call_id: z.string().min(1).max(256),
    tool_name: z.string().min(1).max(256),
    arguments: z.unknown(),
    /**
     * Trust labels of the context items in the model request that produced the call: at most
     * `user` — `platform` and `trusted_configuration` are refused (400 request.trust_not_allowed, docs/adr/0051).
     */
    context_trust: z.array(TrustLevel).min(1).max(1000),
    /** A lower label per top-level argument (never a higher one than the origin allows; at most `user`). */
    argument_trust: z.record(z.string(), TrustLevel).optional(),
  })
  .strict();
export type SubmittedCall = z.infer<typeof SubmittedCall>;

export const SubmitStepRequest = z
  .object({
    step_number: z.number().int().nonnegative().max(1_000_000),
    calls: z.array(SubmittedCall).min(1).max(128),
    /** How long to wait for the outcomes before answering 202 (default 10, at most 30). */
    wait_seconds: z.number().min(0).max(MAXIMUM_WAIT_SECONDS).optional(),
  })
  .strict();
export type SubmitStepRequest = z.infer<typeof SubmitStepRequest>;

export const PendingApproval = z
  .object({
    call_id: z.string(),
    invocation_id: z.uuid(),
    approval_id: z.uuid().nullable(),
  })
  .strict();
export type PendingApproval = z.infer<typeof PendingApproval>;

/**
 * § Control tools: a call that suspended. `user_input`: conversation.ask_user, `ref` is the
 * question id (answer it with POST /v1/questions/{question_id}/answer); `child_run`:
 * delegate.run, `ref` is the child run's id; `approval`: sandbox.run_orchestration, whose
 * program's call waited for a person past the hold, `ref` is that approval's id (decide it with
 * POST /v1/approvals/{id}/approve or /deny; the program then runs again, docs/adr/0039).
 */
const SuspendedCall = z
  .object({
    call_id: z.string(),
    invocation_id: z.uuid(),
    kind: SuspendedKind,
    ref: z.string(),
  })
  .strict();
export type SuspendedCall = z.infer<typeof SuspendedCall>;

/**
 * A step's outcome, read from the invocation rows. `completed`: every call has a terminal row
 * (one item each, in call order); `waiting_for_approval`: every call is terminal or waiting
 * for a person's decision (listed in pending_approvals); `suspended`: every call is terminal,
 * waiting for a decision, or suspended on a question or a child run (listed in suspended);
 * `running`: some call is none of these —
 * not yet run, running, or decided and waiting to be re-run (items hold those that concluded).
 */
export const StepOutcome = z
  .object({
    step_number: z.number().int().nonnegative(),
    status: z.enum(['running', 'suspended', 'waiting_for_approval', 'completed']),
    items: z.array(ToolResultItem),
    pending_approvals: z.array(PendingApproval),
    suspended: z.array(SuspendedCall),
    /** ADR-0136: the next model turn is synthesis-only. */
    synthesis_only: z.boolean(),
    run_status: RunStatus,
  })
  .strict();
export type StepOutcome = z.infer<typeof StepOutcome>;
