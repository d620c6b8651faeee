import { z } from 'zod';
import { RunFailureReason, ToolResultItem } from '@veetbot/domain';
import { NullableTimestamp, Timestamp } from './common';

export const RunBudgets = z
  .object({
    /** Tool calls the whole run may make; absent: unbounded. */
    maximum_tool_calls: z.number().int().nonnegative().optional(),
  })
  .strict();
export type RunBudgets = z.infer<typeof RunBudgets>;

export const CreateRunRequest = z
  .object({
    session_id: z.uuid(),
    /** The run's deadline, from now: every call's effective deadline is min'd with it. */
    deadline_seconds: z
      .number()
      .int()
      .positive()
      .max(7 * 24 * 3600),
    budgets: RunBudgets.optional(),
  })
  .strict();
export type CreateRunRequest = z.infer<typeof CreateRunRequest>;

export const RunStatus = z.enum(['running', 'waiting_for_user', 'succeeded', 'failed', 'cancelled']);
export type RunStatus = z.infer<typeof RunStatus>;

/**
 * docs/adr/0082: a call of the run waits for a person's consent to an MCP server — the link to
 * open (it carries the state: whoever may read the run may complete the consent; the tokens go
 * to `principal_id` whatever happens), the server and the principal it is for.
 */
const RunAuthorization = z
  .object({
    url: z.string().max(8192),
    server_id: z.string(),
    principal_id: z.string(),
    expires_at: Timestamp,
  })
  .strict();
export type RunAuthorization = z.infer<typeof RunAuthorization>;

export const Run = z
  .object({
    id: z.uuid(),
    session_id: z.uuid(),
    status: RunStatus,
    deadline_at: Timestamp,
    budgets: RunBudgets,
    created_at: Timestamp,
    finished_at: NullableTimestamp,
    /**
     * Why a `failed` run failed, a reason code with one fixed message (docs/adr/0020):
     * `tool.loop_detected` (the identical-call breaker, or a tool call in the synthesis-only
     * turn), `policy.breaker.repeated_denial` (three identical denials), `run.deadline_exceeded`
     * (a step after the deadline). Null for any other status.
     */
    failure_reason: RunFailureReason.nullable(),
    /** The run that delegated this one (delegate.run), or null. */
    parent_run_id: z.uuid().nullable(),
    /** The final answer its agent completed it with (POST /v1/runs/{id}/complete), or null. */
    result: z.string().nullable(),
    /**
     * GET /v1/runs/{id} only (docs/adr/0082): the oldest consent a suspended call of the run
     * waits for, or null; other routes leave it out.
     */
    authorization: RunAuthorization.nullable().optional(),
  })
  .strict();
export type Run = z.infer<typeof Run>;

/** The largest final answer a run is completed with. */
const RUN_RESULT_MAXIMUM_CHARACTERS = 65_536;

export const CompleteRunRequest = z
  .object({
    /** The run's final answer: a delegated child's result enters its parent as EXTERNAL_UNTRUSTED. */
    result: z.string().min(1).max(RUN_RESULT_MAXIMUM_CHARACTERS),
  })
  .strict();
export type CompleteRunRequest = z.infer<typeof CompleteRunRequest>;

/** A question conversation.ask_user put to the run's user, still unanswered. */
const Question = z
  .object({
    question_id: z.uuid(),
    run_id: z.uuid(),
    step_number: z.number().int().nonnegative(),
    call_id: z.string(),
    question: z.string(),
    asked_at: NullableTimestamp,
  })
  .strict();
export type Question = z.infer<typeof Question>;

export const QuestionList = z.object({ questions: z.array(Question) }).strict();
export type QuestionList = z.infer<typeof QuestionList>;

export const AnswerQuestionRequest = z
  .object({
    answer: z.string().min(1).max(16_000),
  })
  .strict();
export type AnswerQuestionRequest = z.infer<typeof AnswerQuestionRequest>;

export const AnsweredQuestion = z
  .object({
    question_id: z.uuid(),
    run_id: z.uuid(),
    /** The conversation.ask_user call's item, now carrying the answer (trust user). */
    item: ToolResultItem,
  })
  .strict();
export type AnsweredQuestion = z.infer<typeof AnsweredQuestion>;

/** context.update_working_state's document, as its latest version stands. */
export const WorkingState = z
  .object({
    run_id: z.uuid(),
    version: z.number().int().positive(),
    document: z.record(z.string(), z.unknown()),
    updated_at: Timestamp,
  })
  .strict();
export type WorkingState = z.infer<typeof WorkingState>;

export const RunList = z.object({ runs: z.array(Run) }).strict();
export type RunList = z.infer<typeof RunList>;
