import { IdempotencyClass, InvocationStatus, SuspendedKind, ToolOutcomeStatus, ToolSource, TrustLevel } from '@veetbot/domain';
import { sql } from 'drizzle-orm';
import { bigint, boolean, check, foreignKey, index, integer, jsonb, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core';
import { runs } from './runs';
import { oneOf } from './checks';
import { timestamptz } from './tenants';

/**
 * tool_invocations: Section 15's base columns plus every column of § Schema additions, with
 * exactly the stated types, NULL-ness and defaults. UNIQUE(idempotency_key) is the dedup path
 * (§ Deduplication on the way in).
 */
export const toolInvocations = pgTable(
  'tool_invocations',
  {
    // Section 15
    id: uuid('id').primaryKey().defaultRandom(),
    // The tenant, the run and the session are checked by one foreign key to the run (below):
    // the run references its tenant and session, so separate keys to tenants and sessions
    // would only add two shared-row locks to every insert (ADR 0013).
    tenantId: text('tenant_id').notNull(),
    runId: uuid('run_id').notNull(),
    sessionId: uuid('session_id').notNull(),
    stepNumber: integer('step_number').notNull(),
    callId: text('call_id').notNull(),
    toolName: text('tool_name').notNull(),
    toolVersion: text('tool_version').notNull(),
    status: text('status').$type<InvocationStatus>().notNull(),
    idempotencyKey: text('idempotency_key').notNull(),
    argumentsHash: text('arguments_hash').notNull(),
    arguments: jsonb('arguments').$type<Record<string, unknown>>().notNull(),
    result: jsonb('result').$type<unknown>(),
    error: jsonb('error').$type<unknown>(),
    createdAt: timestamptz('created_at').notNull(),
    startedAt: timestamptz('started_at'),
    finishedAt: timestamptz('finished_at'),
    // § Schema additions
    toolSource: text('tool_source').$type<ToolSource>().notNull().default('builtin'),
    serverId: text('server_id'),
    idempotencyClass: text('idempotency_class').$type<IdempotencyClass>().notNull(),
    effectSentAt: timestamptz('effect_sent_at'),
    attemptNumber: integer('attempt_number').notNull().default(1),
    suspendedKind: text('suspended_kind').$type<SuspendedKind>(),
    suspendedRef: text('suspended_ref'),
    outputBytes: bigint('output_bytes', { mode: 'number' }),
    truncated: boolean('truncated').notNull().default(false),
    artifactId: uuid('artifact_id'),
    outcomeStatus: text('outcome_status').$type<ToolOutcomeStatus>(),
    reasonCode: text('reason_code'),
    originTrust: text('origin_trust').$type<TrustLevel>().notNull(),
    parallelGroup: uuid('parallel_group'),
    // docs/adr/0047: the policy version and rule step 6 decided under (null before step 6).
    policyVersion: text('policy_version'),
    policyRuleId: text('policy_rule_id'),
  },
  (t) => [
    unique('tool_invocations_idempotency_key_unique').on(t.idempotencyKey),
    // An invocation belongs to its run's tenant and session, not only to some session of the tenant.
    foreignKey({
      name: 'tool_invocations_run_session_fk',
      columns: [t.tenantId, t.runId, t.sessionId],
      foreignColumns: [runs.tenantId, runs.id, runs.sessionId],
    }),
    unique('tool_invocations_tenant_id_id_unique').on(t.tenantId, t.id),
    index('tool_invocations_run_step_idx').on(t.runId, t.stepNumber),
    // The recovery sweep's predicate (§ Control tools: suspended rows are not dead workers).
    index('tool_invocations_sweep_idx').on(t.runId).where(sql`${t.status} = 'running' AND ${t.suspendedKind} IS NULL`),
    // The within-run repeat guard (§ MCP failure modes).
    index('tool_invocations_uncertain_idx').on(t.runId, t.toolName, t.argumentsHash).where(sql`${t.status} = 'uncertain'`),
    // The api's listing (GET /v1/invocations, the review queue): keyset pages per tenant.
    index('tool_invocations_tenant_created_idx').on(t.tenantId, t.createdAt, t.id),
    check('tool_invocations_status_check', oneOf(t.status, InvocationStatus.options)),
    check('tool_invocations_tool_source_check', oneOf(t.toolSource, ToolSource.options)),
    check('tool_invocations_idempotency_class_check', oneOf(t.idempotencyClass, IdempotencyClass.options)),
    check('tool_invocations_suspended_kind_check', oneOf(t.suspendedKind, SuspendedKind.options)),
    check('tool_invocations_outcome_status_check', oneOf(t.outcomeStatus, ToolOutcomeStatus.options)),
    check('tool_invocations_origin_trust_check', oneOf(t.originTrust, TrustLevel.options)),
  ],
);
