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
    /**
     * What a decision is bound to (docs/adr/0047): the call's arguments hash and the policy
     * version and rule that asked. Null only on approvals opened before migration 0020.
     */
    arguments_hash: z.string().nullable(),
    policy_version: z.string().nullable(),
    policy_rule_id: z.string().nullable(),
  })
  .strict();
export type Approval = z.infer<typeof Approval>;

/**
 * The body of approve / deny: what the decider saw. Both or neither; with both, the decision is
 * recorded only while the approval still holds them (else 409 approval.arguments_changed /
 * approval.policy_changed). Without a body the decision binds to what the approval holds when
 * it arrives (docs/adr/0047).
 */
export const DecideApprovalRequest = z
  .object({
    arguments_hash: z.string().regex(/^[0-9a-f]{64}$/),
    policy_version: z.string().min(1).max(200),
  })
  .strict()
  .or(z.object({}).strict());
export type DecideApprovalRequest = { readonly arguments_hash: string; readonly policy_version: string } | Record<string, never>;

export const ApprovalList = z.object({ approvals: z.array(Approval) }).strict();
export type ApprovalList = z.infer<typeof ApprovalList>;
