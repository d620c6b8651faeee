import { z } from 'zod';
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
    deadline_seconds: z.number().int().positive().max(7 * 24 * 3600),
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
  })
  .strict();
export type Run = z.infer<typeof Run>;
