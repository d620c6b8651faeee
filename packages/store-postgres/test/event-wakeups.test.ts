import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { openMigratedMemoryDatabase } from '../src/memory-template';
import { createStepQueue } from '../src/step-queue/step-queue';
import { createStores } from '../src/stores';
import { encodeEventWake, EVENTS_CHANNEL, EventWakeUps } from '../src/step-queue/event-wakeups';
import { encodeStep, STEP_DONE_CHANNEL } from '../src/step-queue/wake-ups';

// docs/adr/0054: the event streams' side of the one listener, without a database.

const RUN = '0b6c1f1e-7d52-4d7e-9a57-2f5c2b1a0c01';
const HOUR = 3_600_000;

/** Whether `promise` has settled once everything already queued has run. */
async function settled(promise: Promise<void>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('EventWakeUps', () => {
  it("wakes only the notified tenant's stream; a wake that comes between waits is kept for the next; a sequence already seen wakes nothing", async () => {
    const feed = new EventWakeUps();
    const mine = feed.subscribe('t1', RUN);
    const otherTenant = feed.subscribe('t2', RUN);
    const runLess = feed.subscribe('t1', null);
    mine.seen(4);

    const waiting = mine.wait(HOUR);
    const otherWaiting = otherTenant.wait(HOUR);
    const runLessWaiting = runLess.wait(HOUR);
    feed.deliver(EVENTS_CHANNEL, encodeEventWake('t1', RUN, 4)); // already sent: nothing
    expect(await settled(waiting)).toBe(false);
    feed.deliver(EVENTS_CHANNEL, encodeEventWake('t1', RUN, 5));
    expect(await settled(waiting)).toBe(true);
    expect(await settled(otherWaiting)).toBe(false);
    expect(await settled(runLessWaiting)).toBe(false);

    // Nobody waiting: remembered, and the next wait returns at once (once).
    feed.deliver(STEP_DONE_CHANNEL, encodeStep({ tenantId: 't1', runId: RUN, stepNumber: 3 }));
    expect(await settled(mine.wait(HOUR))).toBe(true);
    expect(await settled(mine.wait(HOUR))).toBe(false);

    feed.deliver(EVENTS_CHANNEL, encodeEventWake('t1', null, 1));
    expect(await settled(runLessWaiting)).toBe(true);
    // Garbage on the channel wakes nothing.
    for (const payload of ['', 'null', '{"tenant_id":1}', '[]']) feed.deliver(EVENTS_CHANNEL, payload);
    expect(await settled(otherWaiting)).toBe(false);

    feed.wakeAll();
    expect(await settled(otherWaiting)).toBe(true);
    for (const s of [mine, otherTenant, runLess]) s.close();
    expect(feed.size).toBe(0);
    feed.close();
  });

  it('the fallback check reads once per tenant with open streams and wakes only the streams behind their counter', async () => {
    const reads: [string, string[]][] = [];
    const feed = new EventWakeUps({
      fallbackMs: 1,
      lastSequences: async (tenantId, streamIds) => {
        reads.push([tenantId, [...streamIds].sort()]);
        return new Map([
          [RUN, 7],
          ['', 2],
        ]);
      },
    });
    const behind = feed.subscribe('t1', RUN);
    const sameStream = feed.subscribe('t1', RUN);
    const upToDate = feed.subscribe('t1', null);
    behind.seen(6);
    sameStream.seen(7);
    upToDate.seen(2);
    const woken = behind.wait(HOUR);
    const notWoken = Promise.race([sameStream.wait(HOUR), upToDate.wait(HOUR)]);
    await woken;
    expect(reads[0]).toEqual(['t1', ['', RUN]]);
    expect(await settled(notWoken)).toBe(false);
    for (const s of [behind, sameStream, upToDate]) s.close();
    feed.close();
  });

  it('on a real database (PGlite): an append notifies its stream; an event written without a notification is found by the fallback check', async () => {
    const database = await openMigratedMemoryDatabase(join(tmpdir(), 'veetbot-pglite-templates'));
    // Two listeners: one whose fallback never runs within the test, one whose runs every 20 ms.
    const notified = await createStepQueue(database, { eventFallbackMs: HOUR });
    const polled = await createStepQueue(database, { eventFallbackMs: 20 });
    try {
      const stores = createStores(database);
      await stores.tenants.create({ id: 't1', name: 't1', createdAt: new Date() });
      const event = (n: number) => ({ runId: null, type: 'test.e', payload: { n }, derivationKey: `test.e:${n}`, createdAt: new Date() });
      // Through the store: notified in the append's transaction.
      const byNotification = notified.events.subscribe('t1', null);
      const woken = byNotification.wait(HOUR);
      const [first] = await stores.events.append('t1', [event(1)]);
      await woken;
      byNotification.close();
      // Through the SQL function alone (as the hot path writes): no notification; the fallback
      // check reads event_streams and sees the stream is behind.
      const byCheck = polled.events.subscribe('t1', null);
      byCheck.seen(first!.sequence);
      const found = byCheck.wait(HOUR);
      await database.statement(
        sql`select veetbot_append_call_events('t1', '', ${JSON.stringify([{ type: 'test.e', payload: { n: 2 }, derivation_key: 'test.e:2', created_at: new Date().toISOString() }])}::jsonb)`,
      );
      await found;
      expect((await stores.events.listAfter('t1', null, first!.sequence, 10)).map((e) => e.payload)).toEqual([{ n: 2 }]);
      byCheck.close();
    } finally {
      await notified.close();
      await polled.close();
      await database.close();
    }
  });
});
