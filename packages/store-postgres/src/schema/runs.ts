import type { RunFailureReason } from '@veetbot/domain';
import type { RunStatus, StepStatus } from '@veetbot/ports';
import { sql } from 'drizzle-orm';
import { bigint, check, foreignKey, index, integer, jsonb, pgTable, primaryKey, text, unique, uuid } from 'drizzle-orm/pg-core';
import { sessions } from './sessions';
import { oneOf } from './checks';
import { RUN_STATUSES, STEP_STATUSES } from '../vocabulary';
import { tenants, timestamptz } from './tenants';

/** Runs: deadline, budgets, and the lease (owner, expiry, fencing token) that fences writes. */
export const runs = pgTable(
  'runs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    sessionId: uuid('session_id').notNull(),
    parentRunId: uuid('parent_run_id'),
    status: text('status').$type<RunStatus>().notNull().default('running'),
    deadlineAt: timestamptz('deadline_at').notNull(),
    budgets: jsonb('budgets').$type<Record<string, unknown>>().notNull(),
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: timestamptz('lease_expires_at'),
    // A counter far below 2^53 (one increment per acquisition), so a JS number is exact.
    fencingToken: bigint('fencing_token', { mode: 'number' }).notNull().default(0),
    createdAt: timestamptz('created_at').notNull(),
    finishedAt: timestamptz('finished_at'),
    // Why a failed run failed (docs/adr/0020). TEXT without a CHECK: the writer is typed, and a
    // new reason code must not need a migration.
    failureReason: text('failure_reason').$type<RunFailureReason>(),
    // The run's final answer, given when its agent completes it (POST /v1/runs/{id}/complete).
    // A child run's result enters its parent's delegate.run row as EXTERNAL_UNTRUSTED
    // (§ Control tools; docs/adr/0034).
    result: text('result'),
  },
  (t) => [
    unique('runs_tenant_id_id_unique').on(t.tenantId, t.id),
    // The target of tool_invocations_run_session_fk.
    unique('runs_tenant_id_id_session_id_unique').on(t.tenantId, t.id, t.sessionId),
    foreignKey({ name: 'runs_session_fk', columns: [t.tenantId, t.sessionId], foreignColumns: [sessions.tenantId, sessions.id] }),
    foreignKey({ name: 'runs_parent_run_fk', columns: [t.tenantId, t.parentRunId], foreignColumns: [t.tenantId, t.id] }),
    index('runs_lease_expires_at_idx').on(t.leaseExpiresAt),
    // The MCP idle sweep reads each held session's runs (SessionStore.lifecycle, docs/adr/0024).
    index('runs_tenant_id_session_id_idx').on(t.tenantId, t.sessionId),
    // A budgeted step's opening charges the run's delegated children (veetbot_delegated_calls, docs/adr/0050).
    index('runs_tenant_id_parent_run_id_idx').on(t.tenantId, t.parentRunId),
    check('runs_status_check', oneOf(t.status, RUN_STATUSES)),
  ],
);

/**
 * A model step's batch of tool calls. The api inserts it `pending`; a worker claims it from the
 * step queue (ports/step-queue.ts) and the runtime marks it `running`, then `completed`.
 */
export const steps = pgTable(
  'steps',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    runId: uuid('run_id').notNull(),
    stepNumber: integer('step_number').notNull(),
    batch: jsonb('batch').$type<unknown>().notNull(),
    status: text('status').$type<StepStatus>().notNull().default('pending'),
    createdAt: timestamptz('created_at').notNull(),
  },
  (t) => [
    unique('steps_run_id_step_number_unique').on(t.runId, t.stepNumber),
    foreignKey({ name: 'steps_run_fk', columns: [t.tenantId, t.runId], foreignColumns: [runs.tenantId, runs.id] }),
    // The step queue's claim: pending steps, oldest first, across tenants...
    index('steps_pending_idx').on(t.createdAt).where(sql`${t.status} = 'pending'`),
    // ...and running steps whose worker died mid-batch (their run's lease expired unreleased).
    index('steps_running_idx').on(t.createdAt).where(sql`${t.status} = 'running'`),
    // The fair claim (docs/adr/0070): a skip scan for the tenants with claimable or running
    // steps, then each tenant's oldest claimable steps and its steps in flight.
    index('steps_tenant_queue_idx').on(t.tenantId, t.createdAt, t.id).where(sql`${t.status} in ('pending', 'running')`),
    check('steps_status_check', oneOf(t.status, STEP_STATUSES)),
  ],
);

/**
 * § Control tools, context.update_working_state: the run's working-state document, one row per
 * version (a history, never updated in place), written only by that control tool's call through
 * the pipeline (docs/adr/0034). The latest version is the run's working state.
 */
export const workingStates = pgTable(
  'working_states',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    runId: uuid('run_id').notNull(),
    version: integer('version').notNull(),
    document: jsonb('document').$type<Record<string, unknown>>().notNull(),
    // The tool_invocations row that wrote this version.
    invocationId: uuid('invocation_id').notNull(),
    createdAt: timestamptz('created_at').notNull(),
  },
  (t) => [
    primaryKey({ name: 'working_states_pkey', columns: [t.tenantId, t.runId, t.version] }),
    unique('working_states_invocation_id_unique').on(t.invocationId),
    foreignKey({ name: 'working_states_run_fk', columns: [t.tenantId, t.runId], foreignColumns: [runs.tenantId, runs.id] }),
    check('working_states_version_check', sql`${t.version} >= 1`),
  ],
);

/**
 * § New evidence across steps (docs/adr/0078): the evidence part of a run's breaker state, which
 * its invocation rows cannot say — per call, how many identical calls the evidence restarts took
 * off its count and the key it last returned, and the run's restarts spent (the domain's
 * BreakerEvidence, bounded there). One row per run, written only by veetbot_finish_step under
 * the run's lease, read by veetbot_open_step with the earlier steps' tally and by the step view.
 * A platform digest: never model-visible, never stored with a result.
 */
export const runBreakerEvidence = pgTable(
  'run_breaker_evidence',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    runId: uuid('run_id').notNull(),
    evidence: jsonb('evidence').$type<Record<string, unknown>>().notNull(),
    updatedAt: timestamptz('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ name: 'run_breaker_evidence_pkey', columns: [t.tenantId, t.runId] }),
    foreignKey({ name: 'run_breaker_evidence_run_fk', columns: [t.tenantId, t.runId], foreignColumns: [runs.tenantId, runs.id] }),
  ],
);
