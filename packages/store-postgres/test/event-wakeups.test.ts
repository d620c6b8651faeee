import { describe, expect, it } from 'vitest';
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
});
