import { getEventListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { mcpToolName } from '@veetbot/domain';
import { migrate, openDatabase } from '@veetbot/store-postgres';
import { httpServerConfig, loopbackEgress, openGovernedMcpCall, openMcpWorld, startEverythingHttp } from './mcp-scene';
import type { ChildReport, Reading } from './mcp-http-long-session-report';

/**
 * The long-session benchmark's own process (spawned by mcp-http-long-session.bench.ts with
 * --expose-gc), so its memory readings are this session's alone. server-everything over
 * Streamable HTTP (a grandchild, its own process: its memory is not ours) and one governed
 * session holding two connections to it — `everything` (the subject) and `slow` (the same
 * server with a 1 s request timeout, for the cancelled calls). On BENCH_DATABASE_URL (a
 * migrated PostgreSQL database) or PGlite in memory. Prints one JSON line.
 *
 * 1. BENCH_WARMUP governed echo calls, a reading; BENCH_CALLS more from BENCH_CALLERS callers,
 *    a reading after every BENCH_CHECKPOINT.
 * 2. BENCH_CANCELLED governed calls of trigger-long-running-operation (3 s) on `slow`: each
 *    times out after 1 s (the SDK sends notifications/cancelled), then a wait until the server
 *    has finished every one of them, and a reading; BENCH_WARMUP more echo calls, a reading.
 *
 * The abort listeners: every POST the SDK's StreamableHTTPClientTransport sends carries the one
 * signal of the transport's own AbortController (created in start(), aborted in close()), which
 * the adapter's pinned fetch hands to http.request; Node adds an 'abort' listener per request
 * and removes it when the request closes. That controller is the SDK's: the prototype's start()
 * is wrapped here to note each transport started, and its signal's addEventListener to keep the
 * peak; each reading counts the listeners (events.getEventListeners).
 */

const calls = Number(process.env.BENCH_CALLS ?? '5000');
const warmup = Number(process.env.BENCH_WARMUP ?? '200');
const checkpoint = Number(process.env.BENCH_CHECKPOINT ?? '1000');
const callers = Number(process.env.BENCH_CALLERS ?? '8');
const cancelled = Number(process.env.BENCH_CANCELLED ?? '40');
const MESSAGE = 'benchmark echo';
const LONG_OPERATION_SECONDS = 3;
const SLOW_REQUEST_TIMEOUT_SECONDS = 1;

interface Watched {
  readonly transport: { _abortController?: AbortController; _url?: URL };
  peak: number;
}
const transports: Watched[] = [];
const start = StreamableHTTPClientTransport.prototype.start;
StreamableHTTPClientTransport.prototype.start = async function (this: StreamableHTTPClientTransport) {
  await start.call(this);
  const watched: Watched = { transport: this as unknown as Watched['transport'], peak: 0 };
  transports.push(watched);
  const signal = watched.transport._abortController?.signal;
  if (signal !== undefined) {
    // An own property in front of EventTarget's: Node's http.request adds its listener through it.
    const add = signal.addEventListener.bind(signal);
    signal.addEventListener = ((...a: Parameters<AbortSignal['addEventListener']>) => {
      add(...a);
      watched.peak = Math.max(watched.peak, getEventListeners(signal, 'abort').length);
    }) as AbortSignal['addEventListener'];
  }
};

const warnings = new Map<string, number>();
process.on('warning', (warning) => {
  const key = `${warning.name}: ${warning.message.slice(0, 160)}`;
  warnings.set(key, (warnings.get(key) ?? 0) + 1);
});

function reading(made: number, seconds: number): Reading {
  // Twice: the first collection runs finalizers whose targets the second one frees.
  (globalThis as { gc?: () => void }).gc?.();
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  const abortListeners: Record<string, number> = {};
  for (const t of transports) {
    const signal = t.transport._abortController?.signal;
    abortListeners[serverIdOf(t)] = signal === undefined ? -1 : getEventListeners(signal, 'abort').length;
  }
  const tcpSockets = process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
  return { calls: made, heapUsedBytes: m.heapUsed, rssBytes: m.rss, externalBytes: m.external, abortListeners, tcpSockets, seconds };
}

/**
 * Which server a transport talks to: the two connections go to the same server, the slow one's
 * URL with a query the server ignores (it routes /mcp by path), so the URL tells them apart.
 */
function serverIdOf(t: Watched): string {
  return t.transport._url?.searchParams.get('connection') ?? 'everything';
}

const server = await startEverythingHttp();
const url = process.env.BENCH_DATABASE_URL;
const database = url ? await openDatabase({ url, poolSize: 10 }) : await openDatabase({ dataDir: 'memory://' });
try {
  if (!url) await migrate(database);
  const egress = loopbackEgress();
  const servers = [
    httpServerConfig('everything', server.url, egress),
    httpServerConfig('slow', `${server.url}?connection=slow`, egress, { requestTimeoutSeconds: SLOW_REQUEST_TIMEOUT_SECONDS }),
  ];
  const world = await openMcpWorld(database, servers, { egress });
  try {
    const governed = await openGovernedMcpCall(world, 'everything', 'echo', { message: MESSAGE }, { callers });
    if (transports.length !== servers.length) throw new Error(`expected ${servers.length} HTTP transports, ${transports.length} started`);

    const drive = async (total: number, one: (caller: number) => Promise<unknown>) => {
      let remaining = total;
      await Promise.all(
        Array.from({ length: callers }, async (_, caller) => {
          while (remaining > 0) {
            remaining -= 1;
            await one(caller);
          }
        }),
      );
    };

    const warmStart = performance.now();
    await drive(warmup, (caller) => governed.call(caller));
    const warmupSeconds = (performance.now() - warmStart) / 1000;
    const readings: Reading[] = [reading(0, 0)];
    let made = 0;
    while (made < calls) {
      const batch = Math.min(checkpoint, calls - made);
      const begun = performance.now();
      await drive(batch, (caller) => governed.call(caller));
      made += batch;
      readings.push(reading(made, (performance.now() - begun) / 1000));
    }
    const peakDuringCalls = Object.fromEntries(transports.map((t) => [serverIdOf(t), t.peak]));
    const warningsDuringCalls = [...warnings.values()].reduce((sum, n) => sum + n, 0);

    // 2. Cancelled calls: each times out, the SDK cancels it, the server never answers it.
    const longTool = mcpToolName('slow', 'trigger-long-running-operation');
    const statuses = new Map<string, number>();
    const cancelStart = performance.now();
    await drive(cancelled, async (caller) => {
      const { status, reasonCode } = await governed.attempt(caller, longTool, { duration: LONG_OPERATION_SECONDS, steps: 1 });
      const key = `${status}${reasonCode === null ? '' : ` ${reasonCode}`}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
    });
    const cancelSeconds = (performance.now() - cancelStart) / 1000;
    // Long enough for the server to have finished (and, were it to answer, answered) every one.
    await sleep((LONG_OPERATION_SECONDS + 1.5) * 1000);
    const afterCancelled = reading(made, cancelSeconds);
    // Then echo calls again on the subject connection: the slow connection's leftovers stay.
    const more = Math.min(warmup, calls);
    await drive(more, (caller) => governed.call(caller));
    const afterMore = reading(made + more, 0);

    await governed.close();
    process.stdout.write(
      `${JSON.stringify({
        driver: database.driver,
        serverUrl: server.url,
        warmup,
        warmupSeconds,
        calls: made,
        callers,
        checkpoint,
        transportsStarted: transports.length,
        readings,
        peakDuringCalls,
        warningsDuringCalls,
        cancelled: {
          calls: cancelled,
          requestTimeoutSeconds: SLOW_REQUEST_TIMEOUT_SECONDS,
          operationSeconds: LONG_OPERATION_SECONDS,
          statuses: Object.fromEntries(statuses),
          reading: afterCancelled,
          afterMore,
        },
        warnings: [...warnings].map(([text, count]) => ({ text, count })),
      } satisfies ChildReport)}\n`,
    );
  } finally {
    await world.close();
  }
} finally {
  await database.close();
  await server.stop();
}
