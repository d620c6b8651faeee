import type { TrustLevel } from '@veetbot/domain';
import { bigint, foreignKey, index, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { runs } from './runs';
import { tenants, timestamptz } from './tenants';

/** Artifact metadata (§ Output: limits, truncation, and artifacts). Bytes live in a blob store. */
export const artifacts = pgTable(
  'artifacts',
  {
    id: uuid('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    runId: uuid('run_id').notNull(),
    invocationId: uuid('invocation_id'),
    mediaType: text('media_type').notNull(),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    sha256: text('sha256').notNull(),
    trust: text('trust').$type<TrustLevel>().notNull(),
    createdAt: timestamptz('created_at').notNull(),
  },
  (t) => [
    foreignKey({ name: 'artifacts_run_fk', columns: [t.tenantId, t.runId], foreignColumns: [runs.tenantId, runs.id] }),
    index('artifacts_run_idx').on(t.runId),
  ],
);
