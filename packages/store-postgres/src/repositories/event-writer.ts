import type { EventRow, NewEvent } from '@veetbot/ports';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Tx } from '../database';
import { events } from '../schema';
import { eventsArguments } from './hot-path';

/**
 * Append events inside the caller's transaction, so they commit (or roll back) with the row
 * change they describe. The append itself — the stream counters locked in sorted order, a
 * derivation key already committed skipped, the rest numbered consecutively — is
 * sql/functions/veetbot_append_events.sql, the one the hot-path functions use (ADR 0027: one
 * language per rule). Returned: each input's event, the committed one for a known key.
 */
export async function appendEventsInTx(tx: Tx, tenantId: string, input: readonly NewEvent[]): Promise<EventRow[]> {
  if (input.length === 0) return [];
  const [stream, json] = eventsArguments(input);
  await tx.execute(sql`select veetbot_append_call_events(${tenantId}, ${stream}::text, ${json}::jsonb)`);
  const keys = [...new Set(input.map((event) => event.derivationKey))];
  const stored = await tx
    .select()
    .from(events)
    .where(and(eq(events.tenantId, tenantId), inArray(events.derivationKey, keys)));
  const byKey = new Map<string, EventRow>(stored.map((row) => [row.derivationKey, row]));
  return input.flatMap((event) => {
    const row = byKey.get(event.derivationKey);
    return row ? [row] : [];
  });
}
