import { EventsQuery, StreamEvent } from '@veetbot/client';
import { z } from 'zod';
import { ApiError, notFound } from '../api-error';
import { DEFAULT_API_SETTINGS, type ApiDeps } from '../deps';
import type { RouteTable } from '../routing';
import { eventWire } from '../wire';

const PAGE = 200;
const LastEventId = z.string().regex(/^\d{1,15}$/);

/**
 * RULINGS.md "Event log": SSE replays from a sequence number. `Last-Event-ID` (or
 * `last_event_id`) replays the stream from the events table, then the stream goes live by
 * reading the table again whenever it is woken — the table is the only source, so a replay and
 * the live tail can never disagree — with a comment line every `heartbeatMs`.
 *
 * docs/adr/0054: a stream does not poll. It subscribes to the process's one listener
 * (`deps.events`) before its first read, and reads from its last sequence when an append to its
 * stream, or its run's step finish, is notified; the feed's fallback check (one read per tenant
 * streaming, every few seconds) covers a lost notification. Without a feed it reads every
 * `eventPollMs`. A tenant holds at most `eventStreamsPerTenant` open streams in this process:
 * the next is 429 `events.streams_exhausted`, and a slot frees when a stream ends.
 */
export function eventRoutes(routes: RouteTable, deps: ApiDeps): void {
  const settings = { ...DEFAULT_API_SETTINGS, ...deps.settings };
  const open = new Map<string, number>();
  const release = (tenantId: string) => {
    const left = (open.get(tenantId) ?? 1) - 1;
    if (left <= 0) open.delete(tenantId);
    else open.set(tenantId, left);
  };
  routes.add(
    {
      method: 'get',
      path: '/v1/events',
      operationId: 'streamEvents',
      summary: "Server-sent events of a run's stream (or the tenant's run-less stream), replayed after Last-Event-ID, then live.",
      tag: 'events',
      query: EventsQuery,
      responses: {
        200: {
          description: 'text/event-stream: `id:` the sequence, `event:` the type, `data:` the event as JSON.',
          raw: {
            contentType: 'text/event-stream',
            schema: z.toJSONSchema(StreamEvent, { target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>,
          },
        },
      },
    },
    async (c, { query, principal }) => {
      const tenantId = principal.tenant_id;
      const runId = query.run_id ?? null;
      if (runId !== null && (await deps.stores.runs.get(tenantId, runId)) === null) throw notFound();
      const header = c.req.header('last-event-id');
      let after = query.last_event_id ?? 0;
      if (header !== undefined && header.trim() !== '') {
        const parsed = LastEventId.safeParse(header.trim());
        if (!parsed.success)
          throw new ApiError(400, 'request.invalid', 'Invalid request at header.Last-Event-ID: expected a sequence number.');
        after = Number(parsed.data);
      }
      const held = open.get(tenantId) ?? 0;
      if (held >= settings.eventStreamsPerTenant)
        throw new ApiError(
          429,
          'events.streams_exhausted',
          `This tenant already has ${settings.eventStreamsPerTenant} open event streams here; close one (or resume later with Last-Event-ID).`,
          { retryable: true, headers: { 'Retry-After': '5' } },
        );
      open.set(tenantId, held + 1);
      // Registered before the first read: a notification landing between a read and the next
      // wait makes that wait return at once (docs/adr/0054).
      const subscription = deps.events?.subscribe(tenantId, runId) ?? null;
      subscription?.seen(after);

      const encoder = new TextEncoder();
      const stop = new AbortController();
      const onStop = () => stop.abort();
      c.req.raw.signal.addEventListener('abort', onStop, { once: true });
      deps.shutdownSignal?.addEventListener('abort', onStop, { once: true });
      if (deps.shutdownSignal?.aborted === true) stop.abort();

      const body = new ReadableStream<Uint8Array>({
        start: (controller) => {
          const write = (text: string) => controller.enqueue(encoder.encode(text));
          void (async () => {
            write('retry: 2000\n: connected\n\n');
            let lastWrite = Date.now();
            try {
              while (!stop.signal.aborted) {
                const events = await deps.stores.events.listAfter(tenantId, runId, after, PAGE);
                for (const event of events) {
                  write(`id: ${event.sequence}\nevent: ${event.type}\ndata: ${JSON.stringify(eventWire(event))}\n\n`);
                  after = event.sequence;
                  lastWrite = Date.now();
                }
                subscription?.seen(after);
                if (events.length === PAGE) continue;
                if (Date.now() - lastWrite >= settings.heartbeatMs) {
                  write(': heartbeat\n\n');
                  lastWrite = Date.now();
                }
                const untilHeartbeat = Math.max(1, settings.heartbeatMs - (Date.now() - lastWrite));
                if (subscription === null) await sleep(Math.min(settings.eventPollMs, untilHeartbeat), stop.signal);
                else await subscription.wait(untilHeartbeat, stop.signal);
              }
            } catch (error) {
              // The stream is already open: the error cannot become a status. Log it, end the
              // stream, and let the client reconnect with Last-Event-ID.
              if (!stop.signal.aborted) deps.logError?.(error, { method: 'GET', path: '/v1/events' });
            } finally {
              subscription?.close();
              release(tenantId);
              c.req.raw.signal.removeEventListener('abort', onStop);
              deps.shutdownSignal?.removeEventListener('abort', onStop);
              try {
                controller.close();
              } catch {
                // Already cancelled by the client.
              }
            }
          })();
        },
        cancel: () => stop.abort(),
      });
      return new Response(body, {
        status: 200,
        headers: {
          'Content-Type': 'text/event-stream; charset=utf-8',
          'Cache-Control': 'no-cache',
          Connection: 'keep-alive',
          'X-Accel-Buffering': 'no',
        },
      });
    },
  );
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
