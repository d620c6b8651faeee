import type { EventRow, EventStore, NewEvent } from '@veetbot/ports';
import { and, asc, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Database } from '../database';
import { events } from '../schema';
import { appendEventsInTx } from './event-writer';

export class PostgresEventStore implements EventStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  append(tenantId: string, input: readonly NewEvent[]): Promise<EventRow[]> {
    return this.#db.tenant(tenantId, (tx) => appendEventsInTx(tx, tenantId, input));
  }

  async listAfter(tenantId: string, runId: string | null, afterSequence: number, limit: number): Promise<EventRow[]> {
    const rows = await this.#db.tenant(tenantId, (tx) =>
      tx
        .select()
        .from(events)
        .where(and(runId === null ? isNull(events.runId) : eq(events.runId, runId), gt(events.sequence, afterSequence)))
        .orderBy(asc(events.sequence))
        .limit(limit),
    );
    // ADR 0015: the intent's and claim's events may come from a commit not yet flushed. A
    // flushed commit flushes the write-ahead log up to itself, so past everything read above.
    // PostgreSQL flushes a commit only when its transaction wrote to the log (a transaction id
    // alone is not enough), so this one writes an empty transactional logical message (a
    // logical-decoding consumer, if any, sees it under its prefix); veetbot_require_flush:
    // even where the deployment made commits unflushed by default.
    if (rows.length > 0) await this.#db.statement(sql`select veetbot_require_flush(), pg_logical_emit_message(true, 'veetbot.flush', '')`);
    return rows;
  }
}
