import { z } from 'zod';
import { IdempotencyClass, InvocationStatus, SuspendedKind, ToolOutcomeStatus, ToolSource, TrustLevel } from '@veetbot/domain';
import { Cursor, Limit, NullableTimestamp, Timestamp } from './common';

export const ListInvocationsQuery = z
  .object({
    run_id: z.uuid().optional(),
    status: InvocationStatus.optional(),
    tool_name: z.string().min(1).max(256).optional(),
    cursor: Cursor.optional(),
    limit: Limit,
  })
  .strict();
/** The query as a caller writes it (the schema coerces query-string text). */
export type ListInvocationsQuery = Partial<Omit<z.infer<typeof ListInvocationsQuery>, 'limit'>> & { readonly limit?: number };

export const ReviewResolution = z.enum(['succeeded', 'failed', 'not_applied']);

/** A human's resolution of an UNCERTAIN call (the invocation row itself stays UNCERTAIN). */
export const Review = z
  .object({
    id: z.uuid(),
    invocation_id: z.uuid(),
    run_id: z.uuid(),
    resolution: ReviewResolution,
    note: z.string(),
    reviewed_by: z.string(),
    reviewed_at: Timestamp,
  })
  .strict();
export type Review = z.infer<typeof Review>;

/**
 * The recovery sweep's attempts to settle an UNCERTAIN call through its tool's reconciler
 * (docs/adr/0063): how often it asked, what it saw last, and whether it will ask again. A
 * definite answer is the review itself (reviewed_by `reconciler:<tool>`).
 */
export const Reconciliation = z
  .object({
    reconciler: z.string(),
    attempts: z.number().int(),
    last_outcome: z.enum(['applied', 'not_applied', 'unknown', 'error']),
    last_evidence: z.string(),
    next_attempt_at: NullableTimestamp,
    updated_at: Timestamp,
  })
  .strict();
export type Reconciliation = z.infer<typeof Reconciliation>;

/** A tool_invocations row (Section 15 plus § Schema additions), tenant-scoped, with its review if any. */
export const Invocation = z
  .object({
    id: z.uuid(),
    run_id: z.uuid(),
    session_id: z.uuid(),
    step_number: z.number().int(),
    call_id: z.string(),
    tool_name: z.string(),
    tool_version: z.string(),
    status: InvocationStatus,
    idempotency_key: z.string(),
    arguments_hash: z.string(),
    arguments: z.record(z.string(), z.unknown()),
    result: z.unknown(),
    error: z.unknown(),
    created_at: Timestamp,
    started_at: NullableTimestamp,
    finished_at: NullableTimestamp,
    tool_source: ToolSource,
    server_id: z.string().nullable(),
    idempotency_class: IdempotencyClass,
    effect_sent_at: NullableTimestamp,
    attempt_number: z.number().int(),
    suspended_kind: SuspendedKind.nullable(),
    suspended_ref: z.string().nullable(),
    output_bytes: z.number().int().nullable(),
    truncated: z.boolean(),
    artifact_id: z.uuid().nullable(),
    outcome_status: ToolOutcomeStatus.nullable(),
    reason_code: z.string().nullable(),
    origin_trust: TrustLevel,
    parallel_group: z.uuid().nullable(),
    /** The policy version and rule step 6 decided under (docs/adr/0047); null before step 6. */
    policy_version: z.string().nullable(),
    policy_rule_id: z.string().nullable(),
    review: Review.nullable(),
    /** On the review queue and a single invocation: the reconciler's attempts, or null when none was made. */
    reconciliation: Reconciliation.nullable().optional(),
  })
  .strict();
export type Invocation = z.infer<typeof Invocation>;

export const InvocationList = z
  .object({
    invocations: z.array(Invocation),
    /** Pass as `cursor` for the next page; null on the last page. */
    next_cursor: z.string().nullable(),
  })
  .strict();
export type InvocationList = z.infer<typeof InvocationList>;

export const ListUncertainQuery = z
  .object({
    cursor: Cursor.optional(),
    limit: Limit,
  })
  .strict();
export type ListUncertainQuery = { readonly cursor?: string; readonly limit?: number };

export const ResolveReviewRequest = z
  .object({
    resolution: ReviewResolution,
    /** What the reviewer established, and how. */
    note: z.string().min(1).max(4000),
  })
  .strict();
export type ResolveReviewRequest = z.infer<typeof ResolveReviewRequest>;
