import type { ApprovalStatus } from '@veetbot/ports';
import { sql } from 'drizzle-orm';
import { check, foreignKey, index, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core';
import { oneOf } from './checks';
import { APPROVAL_STATUSES } from '../vocabulary';
import { tenants, timestamptz } from './tenants';
import { toolInvocations } from './tool-invocations';

/** Approval records (RULINGS.md "Policy"): one per invocation, decided once. */
export const approvals = pgTable(
  'approvals',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    invocationId: uuid('invocation_id').notNull(),
    runId: uuid('run_id').notNull(),
    status: text('status').$type<ApprovalStatus>().notNull().default('pending'),
    requestedAt: timestamptz('requested_at').notNull(),
    decidedBy: text('decided_by'),
    decidedAt: timestamptz('decided_at'),
    // docs/adr/0047: what a decision is bound to — the call's arguments hash and the policy
    // version and rule that asked (null on approvals older than migration 0020).
    argumentsHash: text('arguments_hash'),
    policyVersion: text('policy_version'),
    policyRuleId: text('policy_rule_id'),
  },
  (t) => [
    // § Deduplication on the way in, rule 5: resume the existing approval, never open a second.
    unique('approvals_invocation_id_unique').on(t.invocationId),
    foreignKey({
      name: 'approvals_invocation_fk',
      columns: [t.tenantId, t.invocationId],
      foreignColumns: [toolInvocations.tenantId, toolInvocations.id],
    }),
    index('approvals_pending_idx').on(t.tenantId, t.requestedAt).where(sql`${t.status} = 'pending'`),
    check('approvals_status_check', oneOf(t.status, APPROVAL_STATUSES)),
  ],
);
