import type { EventRow, EventStore, NewEvent } from '@veetbot/ports';
import { and, asc, eq, gt, isNull } from 'drizzle-orm';
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

  listAfter(tenantId: string, runId: string | null, afterSequence: number, limit: number): Promise<EventRow[]> {
    return this.#db.tenant(tenantId, (tx) =>
      tx
        .select()
        .from(events)
        .where(and(runId === null ? isNull(events.runId) : eq(events.runId, runId), gt(events.sequence, afterSequence)))
        .orderBy(asc(events.sequence))
        .limit(limit),
    );
  }
}
