import type { ReconcileOutcome } from '@veetbot/ports';
import { sql } from 'drizzle-orm';
import { check, foreignKey, integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { oneOf } from './checks';
import { RECONCILIATION_OUTCOMES } from '../vocabulary';
import { tenants, timestamptz } from './tenants';
import { toolInvocations } from './tool-invocations';

/**
 * The recovery sweep's attempts to settle one UNCERTAIN invocation through its tool's
 * reconciler (docs/adr/0063). One row per invocation, upserted per attempt, so a restarted
 * worker resumes the count instead of retrying forever: next_attempt_at null means no more
 * attempts. The invocation row is never touched (a terminal row is never rewritten); a
 * definite answer goes to invocation_reviews, like a person's.
 */
export const invocationReconciliations = pgTable(
  'invocation_reconciliations',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    invocationId: uuid('invocation_id').notNull(),
    reconciler: text('reconciler').notNull(),
    attempts: integer('attempts').notNull(),
    nextAttemptAt: timestamptz('next_attempt_at'),
    lastOutcome: text('last_outcome').$type<ReconcileOutcome | 'error'>().notNull(),
    lastEvidence: text('last_evidence').notNull(),
    updatedAt: timestamptz('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ name: 'invocation_reconciliations_pkey', columns: [t.tenantId, t.invocationId] }),
    foreignKey({
      name: 'invocation_reconciliations_invocation_fk',
      columns: [t.tenantId, t.invocationId],
      foreignColumns: [toolInvocations.tenantId, toolInvocations.id],
    }),
    check('invocation_reconciliations_last_outcome_check', oneOf(t.lastOutcome, RECONCILIATION_OUTCOMES)),
    check('invocation_reconciliations_attempts_check', sql`${t.attempts} >= 1`),
  ],
);
