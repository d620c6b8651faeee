import type { EventRow, NewEvent } from '@veetbot/ports';
import { and, eq, inArray } from 'drizzle-orm';
import type { Tx } from '../database';
import { events, eventStreams } from '../schema';
import { assertEventPayload } from './event-payload';

/** The run-less stream's id in event_streams. */
const TENANT_STREAM = '';

/**
 * Append events inside the caller's transaction, so they commit (or roll back) with the row
 * change they describe. Per stream: lock the counter row, skip derivation keys already
 * committed (returning the committed event), number the rest consecutively, and store the new
 * last sequence. Streams are locked in sorted order so two writers cannot deadlock.
 */
export async function appendEventsInTx(tx: Tx, tenantId: string, input: readonly NewEvent[]): Promise<EventRow[]> {
  if (input.length === 0) return [];
  for (const event of input) assertEventPayload(event);

  const streamIds = [...new Set(input.map((event) => event.runId ?? TENANT_STREAM))].sort();
  const next = new Map<string, number>();
  for (const streamId of streamIds) {
    await tx.insert(eventStreams).values({ tenantId, streamId, lastSequence: 0 }).onConflictDoNothing();
    const [stream] = await tx
      .select({ lastSequence: eventStreams.lastSequence })
      .from(eventStreams)
      .where(and(eq(eventStreams.tenantId, tenantId), eq(eventStreams.streamId, streamId)))
      .for('update');
    next.set(streamId, stream?.lastSequence ?? 0);
  }

  // Read after the stream locks: a concurrent writer of the same key has committed by now.
  const keys = [...new Set(input.map((event) => event.derivationKey))];
  const committed = await tx
    .select()
    .from(events)
    .where(and(eq(events.tenantId, tenantId), inArray(events.derivationKey, keys)));
  const byKey = new Map<string, EventRow>(committed.map((row) => [row.derivationKey, row]));

  const out: EventRow[] = [];
  for (const event of input) {
    const known = byKey.get(event.derivationKey);
    if (known) {
      out.push(known);
      continue;
    }
    const streamId = event.runId ?? TENANT_STREAM;
    const sequence = (next.get(streamId) ?? 0) + 1;
    const [inserted] = await tx
      .insert(events)
      .values({
        tenantId,
        runId: event.runId,
        sequence,
        type: event.type,
        payload: { ...event.payload },
        derivationKey: event.derivationKey,
        createdAt: event.createdAt,
      })
      .onConflictDoNothing({ target: [events.tenantId, events.derivationKey] })
      .returning();
    if (inserted) {
      next.set(streamId, sequence);
      byKey.set(event.derivationKey, inserted);
      out.push(inserted);
      continue;
    }
    // The same key committed on another stream meanwhile: return that one.
    const [raced] = await tx
      .select()
      .from(events)
      .where(and(eq(events.tenantId, tenantId), eq(events.derivationKey, event.derivationKey)));
    if (raced) {
      byKey.set(event.derivationKey, raced);
      out.push(raced);
    }
  }

  for (const streamId of streamIds) {
    await tx
      .update(eventStreams)
      .set({ lastSequence: next.get(streamId) ?? 0 })
      .where(and(eq(eventStreams.tenantId, tenantId), eq(eventStreams.streamId, streamId)));
  }
  return out;
}
