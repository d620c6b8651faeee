import { z } from 'zod';
import { RunFailureReason } from '@veetbot/domain';
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
  })
  .strict();
export type Run = z.infer<typeof Run>;
