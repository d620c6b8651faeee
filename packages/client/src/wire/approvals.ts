import { z } from 'zod';
import { Limit, NullableTimestamp, Timestamp } from './common';

export const ListApprovalsQuery = z
  .object({
    status: z.literal('pending').default('pending'),
    limit: Limit,
  })
  .strict();
/** The query as a caller writes it (the schema coerces query-string text). */
export type ListApprovalsQuery = { readonly status?: 'pending'; readonly limit?: number };

/** An approval record with the call it decides (what an approver needs to read first). */
export const Approval = z
  .object({
    id: z.uuid(),
    invocation_id: z.uuid(),
    run_id: z.uuid(),
    status: z.enum(['pending', 'approved', 'denied']),
    requested_at: Timestamp,
    decided_by: z.string().nullable(),
    decided_at: NullableTimestamp,
    step_number: z.number().int().nonnegative(),
    call_id: z.string(),
    tool_name: z.string(),
    arguments: z.record(z.string(), z.unknown()),
  })
  .strict();
export type Approval = z.infer<typeof Approval>;

export const ApprovalList = z.object({ approvals: z.array(Approval) }).strict();
export type ApprovalList = z.infer<typeof ApprovalList>;
