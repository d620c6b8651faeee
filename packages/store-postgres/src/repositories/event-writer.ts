import type { EventRow, NewEvent } from '@veetbot/ports';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Tx } from '../database';
import { events } from '../schema';
import { encodeEventWake, EVENTS_CHANNEL } from '../step-queue/event-wakeups';
import { eventsArguments } from './hot-path';

/**
 * Append events inside the caller's transaction, so they commit (or roll back) with the row
 * change they describe. The append itself — the stream counters locked in sorted order, a
 * derivation key already committed skipped, the rest numbered consecutively — is
 * sql/functions/veetbot_append_events.sql, the one the hot-path functions use (ADR 0027: one
 * language per rule). Returned: each input's event, the committed one for a known key.
 *
 * The open SSE streams of each stream written are told when this commits (docs/adr/0054): one
 * pg_notify statement in the same transaction, carrying the stream and its last sequence. Not
 * on a step's hot path: a call's events are written by the hot functions, and the step's finish
 * notifies its run once.
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
  const last = new Map<string | null, number>();
  for (const row of stored) last.set(row.runId, Math.max(last.get(row.runId) ?? 0, row.sequence));
  const wakes = [...last].map(([runId, sequence]) => encodeEventWake(tenantId, runId, sequence));
  if (wakes.length > 0)
    await tx.execute(sql`select pg_notify(${EVENTS_CHANNEL}, w) from json_array_elements_text(${JSON.stringify(wakes)}::json) as w`);
  const byKey = new Map<string, EventRow>(stored.map((row) => [row.derivationKey, row]));
  return input.flatMap((event) => {
    const row = byKey.get(event.derivationKey);
    return row ? [row] : [];
  });
}
