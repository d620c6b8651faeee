import { bigint, jsonb, pgTable, primaryKey, text, unique, uuid } from 'drizzle-orm/pg-core';
import { tenants, timestamptz } from './tenants';

/**
 * The event log (RULINGS.md "Event log"): identity and classification only (§ Events and
 * telemetry). No foreign key to runs: events are retained on their own schedule. No foreign key
 * to tenants either: every event is written in the transaction of the row change it announces,
 * and its stream counter (event_streams, which does reference the tenant) is written in that same
 * transaction; a key here would lock the one tenant row from every event of every concurrent
 * call (ADR 0013). Row-level security still pins tenant_id to the transaction's tenant.
 */
export const events = pgTable(
  'events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id').notNull(),
    // NULL: the tenant's run-less stream.
    runId: uuid('run_id'),
    sequence: bigint('sequence', { mode: 'number' }).notNull(),
    type: text('type').notNull(),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    derivationKey: text('derivation_key').notNull(),
    createdAt: timestamptz('created_at').notNull(),
  },
  (t) => [
    unique('events_tenant_id_derivation_key_unique').on(t.tenantId, t.derivationKey),
    // One sequence per stream; NULLS NOT DISTINCT makes the run-less stream one stream too. It is
    // also the index replay reads (tenant, run, sequence > n).
    unique('events_stream_sequence_unique').on(t.tenantId, t.runId, t.sequence).nullsNotDistinct(),
  ],
);

/**
 * The per-stream sequence counter. Incrementing it inside the writing transaction takes a row
 * lock, so concurrent writers to one stream are ordered and the sequence is gapless: a rolled
 * back transaction rolls its increment back too. stream_id is the run id, or '' for the
 * tenant's run-less stream.
 */
export const eventStreams = pgTable(
  'event_streams',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    streamId: text('stream_id').notNull(),
    lastSequence: bigint('last_sequence', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ name: 'event_streams_pk', columns: [t.tenantId, t.streamId] })],
);
