import type { ReviewResolution } from '@veetbot/ports';
import { check, foreignKey, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core';
import { oneOf } from './checks';
import { REVIEW_RESOLUTIONS } from '../vocabulary';
import { tenants, timestamptz } from './tenants';
import { toolInvocations } from './tool-invocations';

/**
 * The UNCERTAIN review queue's resolutions (§ Recovery: "UNCERTAIN; human review"): what a
 * person established about a call the system could not decide. One per invocation, written
 * once; the invocation row itself is never changed by a review (it records what the system
 * knew). The note lives here, not in the event, because the event stream carries identity and
 * classification only (§ Events and telemetry).
 */
export const invocationReviews = pgTable(
  'invocation_reviews',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    invocationId: uuid('invocation_id').notNull(),
    runId: uuid('run_id').notNull(),
    resolution: text('resolution').$type<ReviewResolution>().notNull(),
    note: text('note').notNull(),
    reviewedBy: text('reviewed_by').notNull(),
    reviewedAt: timestamptz('reviewed_at').notNull(),
  },
  (t) => [
    unique('invocation_reviews_invocation_id_unique').on(t.invocationId),
    foreignKey({
      name: 'invocation_reviews_invocation_fk',
      columns: [t.tenantId, t.invocationId],
      foreignColumns: [toolInvocations.tenantId, toolInvocations.id],
    }),
    check('invocation_reviews_resolution_check', oneOf(t.resolution, REVIEW_RESOLUTIONS)),
  ],
);
