import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app';
import { eventSettingsFromEnv } from '../src/event-settings';
import { errorOf, openApiHarness, sessionAndRun, type ApiHarness } from './harness';

/*
 * docs/adr/0054 on PGlite (the embedded process): a tenant's open streams are capped, and a live
 * stream is woken in process — by an append's notification and by its run's step finish — not
 * by polling: the app under test has no poll to fall back on within the test (an hour).
 */

let h: ApiHarness;
beforeAll(async () => {
  h = await openApiHarness();
}, 120_000);
afterAll(async () => {
  await h?.close();
});

/** An open SSE response, read as it arrives. */
class Stream {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  text = '';
  constructor(response: Response) {
    this.#reader = response.body!.getReader();
  }
  /** Reads until `pattern` is in the text (or the stream ends). */
  async until(pattern: RegExp): Promise<string> {
    while (!pattern.test(this.text)) {
      const { value, done } = await this.#reader.read();
      if (done) throw new Error(`stream ended before ${pattern}:\n${this.text}`);
      this.text += new TextDecoder().decode(value);
    }
    return this.text;
  }
  cancel(): Promise<void> {
    return this.#reader.cancel();
  }
}

const appendLive = (runId: string | null, type = 'test.live') =>
  h.system.stores.events.append(h.a.tenantId, [
    { runId, type, payload: { n: 1 }, derivationKey: `${type}:${randomUUID()}`, createdAt: new Date() },
  ]);

describe('event streams (docs/adr/0054)', () => {
  it('caps open streams per tenant: the next is 429 events.streams_exhausted, another tenant is not affected, and a closed stream frees its slot', async () => {
    const capped = buildApp({ ...h.system.deps, settings: { eventStreamsPerTenant: 2, eventPollMs: 3_600_000 } });
    const open = (key: string) => capped.app.request('http://api.test/v1/events', { headers: { Authorization: `Bearer ${key}` } });
    const first = await open(h.a.key);
    const second = await open(h.a.key);
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await open(h.a.key);
    expect(third.headers.get('retry-after')).toBe('5');
    expect(await errorOf(third)).toMatchObject({ status: 429, code: 'events.streams_exhausted' });
    // Tenant B has its own allowance.
    const other = await open(h.b.key);
    expect(other.status).toBe(200);

    // Closing one frees one slot, and only one.
    const closing = new Stream(first);
    await closing.until(/: connected/);
    await closing.cancel();
    let reopened: Response | null = null;
    for (let attempt = 0; attempt < 1000 && reopened === null; attempt++) {
      await new Promise((resolve) => setImmediate(resolve));
      const response = await open(h.a.key);
      if (response.status === 200) reopened = response;
      else expect((await errorOf(response)).code).toBe('events.streams_exhausted');
    }
    expect(reopened?.status).toBe(200);
    expect((await errorOf(await open(h.a.key))).code).toBe('events.streams_exhausted');
    for (const response of [second, other, reopened!]) await response.body!.cancel();
  });

  it('the setting comes from VEETBOT_EVENT_STREAMS_PER_TENANT, checked', () => {
    expect(eventSettingsFromEnv({ VEETBOT_EVENT_STREAMS_PER_TENANT: '4' })).toEqual({ eventStreamsPerTenant: 4 });
    expect(eventSettingsFromEnv({})).toEqual({});
    for (const bad of ['0', '-1', 'lots', '1.5'])
      expect(() => eventSettingsFromEnv({ VEETBOT_EVENT_STREAMS_PER_TENANT: bad })).toThrow(/VEETBOT_EVENT_STREAMS_PER_TENANT/);
  });

  it('wakes a live stream in process, without polling: an append to its run, an append to the run-less stream, and a step the worker runs', async () => {
    // No poll within the test: only a wake can deliver.
    const noPoll = buildApp({ ...h.system.deps, settings: { eventPollMs: 3_600_000, heartbeatMs: 3_600_000 } });
    const { runId } = await sessionAndRun(h);
    const open = (query: string) =>
      Promise.resolve(noPoll.app.request(`http://api.test/v1/events${query}`, { headers: { Authorization: `Bearer ${h.a.key}` } })).then(
        (r) => new Stream(r),
      );
    const run = await open(`?run_id=${runId}`);
    const tenant = await open('');
    await run.until(/: connected/);
    await tenant.until(/: connected/);
    // Past the first (empty) read: what follows can only arrive by a wake.
    await appendLive(runId);
    await run.until(/event: test\.live/);
    await appendLive(null, 'test.tenant_live');
    await tenant.until(/event: test\.tenant_live/);

    // A step: its tool events are written by the hot path (no notification per event); the
    // step's finish wakes the run's streams.
    const step = await h.call('POST', `/v1/runs/${runId}/steps`, {
      body: {
        step_number: 1,
        calls: [{ call_id: 'c1', tool_name: 'math.evaluate', arguments: { expression: '6*7' }, context_trust: ['user'] }],
      },
    });
    expect(step.status).toBe(200);
    await run.until(/event: tool\.call\.completed/);
    expect(run.text).not.toContain('test.tenant_live');
    expect(tenant.text).not.toContain('tool.call');
    await run.cancel();
    await tenant.cancel();
  });
});
