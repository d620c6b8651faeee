import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { BenchContext } from './bench-context';
import { openBenchDatabase, pgliteReason, runsOnPostgres, type BenchDatabase } from './bench-database';
import { fmt } from './harness';
import { runMeasuredChild } from './measured-child';
import type { ChildReport, Reading } from './mcp-http-long-session-report';

/** Issue 4, Proofs: "measure memory over a long session". BENCH_MCP_LONG_CALLS for a longer (or quicker) look. */
const CALLS = Number(process.env.BENCH_MCP_LONG_CALLS ?? '5000');
const WARMUP = 200;
const CHECKPOINT = 1000;
/** Concurrent callers in the one session, each on its own run (as the worker-memory benchmark). */
const CALLERS = 8;
/** Calls cancelled by their request timeout, on the session's second connection. */
const CANCELLED = 40;
/**
 * Above this many bytes per call, sustained over the second half of the session, the heap is
 * said to grow per call (a leak). One retained listener with its closure, or one retained
 * request/response pair, is several hundred bytes at least; what levels off (JIT code and
 * feedback, the pools' and caches' fill) keeps little slope into the second half — 50 to 75
 * bytes per call measured run to run on completed calls, so the line is drawn well above that
 * and well below one retained object per call.
 */
const LEAK_BYTES_PER_CALL = 200;

/**
 * Issue 4, Proofs: "With SSE responses the SDK's HTTP client was seen to accumulate abort
 * listeners over thousands of requests — measure memory over a long session."
 *
 * One governed session over Streamable HTTP, in a process of its own
 * (mcp-http-long-session-child.ts, --expose-gc): server-everything started as a real process
 * on loopback, the MCP adapter's HTTP connection to it (the pinned fetch, the SDK's
 * StreamableHTTPClientTransport, SSE responses), and BENCH_MCP_LONG_CALLS (default 5,000)
 * governed calls of its `echo` through executeToolCall with DurableDeps, from 8 callers, after
 * 200 warm-up calls. After a full GC: heap used, RSS and external after the warm-up and after
 * every 1,000 calls, the 'abort' listeners on the transport's own signal — the one every
 * request of the connection carries — and the TCP sockets. Then the case that does accumulate:
 * 40 calls cancelled by their request timeout on a second connection of the same session.
 */
export async function benchMcpHttpLongSession(context: BenchContext): Promise<string[]> {
  // PGlite lives in one process: the child opens its own in memory (its WASM memory is then in
  // the child's RSS and external, not its heap). PostgreSQL: a migrated scratch database.
  const db: BenchDatabase | null = runsOnPostgres(context) ? await openBenchDatabase(context, 'veetbot_bench_mcp_long') : null;
  let report: ChildReport;
  try {
    report = await runMeasuredChild<ChildReport>(
      'mcp-http-long-session-child.ts',
      {
        BENCH_CALLS: String(CALLS),
        BENCH_WARMUP: String(WARMUP),
        BENCH_CHECKPOINT: String(CHECKPOINT),
        BENCH_CALLERS: String(CALLERS),
        BENCH_CANCELLED: String(CANCELLED),
        ...(db?.url == null ? {} : { BENCH_DATABASE_URL: db.url }),
      },
      ['--no-warnings'],
    );
  } finally {
    await db?.close();
  }
  return describe(report, db === null ? `PGlite in memory in the child (${pgliteReason(context)})` : db.label);
}

/** A package's version, from the package.json above its resolved entry (the SDK exports no ./package.json). */
function versionOf(name: string, entry: string): string {
  const require = createRequire(import.meta.url);
  let dir = path.dirname(require.resolve(entry));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === name && pkg.version !== undefined) return pkg.version;
    } catch {
      // No package.json at this level: go up.
    }
    const parent = path.dirname(dir);
    if (parent === dir) return '?';
    dir = parent;
  }
}

function describe(report: ChildReport, where: string): string[] {
  const everything = versionOf('@modelcontextprotocol/server-everything', '@modelcontextprotocol/server-everything/dist/index.js');
  const sdk = versionOf('@modelcontextprotocol/client', '@modelcontextprotocol/client');
  const r = report.readings;
  const first = r[0]!;
  const last = r.at(-1)!;
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  const signed = (bytes: number) => `${bytes >= 0 ? '+' : '−'}${(Math.abs(bytes) / 1024 / 1024).toFixed(2)} MB`;
  const seconds = r.reduce((sum, x) => sum + x.seconds, 0);
  const label = (x: Reading) => (x.calls === 0 ? 'after warm-up' : `after ${fmt(x.calls)}`);
  const intervals = r.slice(1).map((x, i) => ({
    calls: x.calls - r[i]!.calls,
    seconds: x.seconds,
    heap: x.heapUsedBytes - r[i]!.heapUsedBytes,
    rss: x.rssBytes - r[i]!.rssBytes,
  }));
  const lastInterval = intervals.at(-1) ?? { calls: 0, seconds: 0, heap: 0, rss: 0 };
  // The slope over the second half of the session (least squares over its readings): what a
  // leak keeps and what levels off does not.
  const half = r.filter((x) => x.calls >= last.calls / 2);
  const slope = half.length >= 2 ? leastSquaresSlope(half.map((x) => [x.calls, x.heapUsedBytes])) : 0;
  const growsPerCall = slope > LEAK_BYTES_PER_CALL;
  const subject = (x: Reading) => x.abortListeners.everything ?? -1;
  const listenersGrew = r.some((x) => subject(x) > subject(first));
  const c = report.cancelled;
  const slowBefore = last.abortListeners.slow ?? -1;
  const slowAfter = c.reading.abortListeners.slow ?? -1;
  const left = slowAfter - slowBefore;
  const outcomes = Object.entries(c.statuses)
    .map(([status, n]) => `${n} ${status}`)
    .join(', ');
  const warnings = report.warnings.length === 0 ? 'none' : report.warnings.map((w) => `${w.count}× ${w.text}`).join('; ');
  return [
    `subject: one governed session on ${where}: ${fmt(report.warmup)} warm-up + ${fmt(report.calls)} governed calls of server-everything ${everything}'s echo over Streamable HTTP (its own process at ${report.serverUrl}; SSE responses) from ${report.callers} callers (a run each) on one connection — the adapter's pinned fetch under the SDK ${sdk} StreamableHTTPClientTransport — each through executeToolCall with DurableDeps, steps 1–14`,
    `calls: ${fmt(report.calls / seconds)} calls/s over the ${fmt(report.calls)} measured calls (${seconds.toFixed(1)} s; per 1,000: ${intervals.map((x) => fmt(x.calls / x.seconds)).join(', ')} calls/s); warm-up ${fmt(report.warmup / report.warmupSeconds)} calls/s`,
    `heap used (after full GC): ${r.map((x) => `${label(x)} ${mb(x.heapUsedBytes)}`).join(', ')}`,
    `RSS: ${r.map((x) => `${label(x)} ${mb(x.rssBytes)}`).join(', ')}; external ${mb(first.externalBytes)} → ${mb(last.externalBytes)}`,
    `growth per 1,000 calls: heap ${intervals.map((x) => signed((x.heap / x.calls) * 1000)).join(', ')}; RSS ${intervals.map((x) => signed((x.rss / x.calls) * 1000)).join(', ')}; heap slope over the second half ${slope.toFixed(0)} bytes/call`,
    `'abort' listeners on the connection's signal (the SDK transport's own AbortController; the pinned fetch puts one listener on it for all of the connection's requests): ${r.map(subject).join(', ')} at the readings — ${listenersGrew ? 'GROWING with the calls' : 'constant: the standing GET SSE stream’s, none left behind by the calls'}; peak ${report.peakDuringCalls.everything ?? '?'} while ${report.callers} calls were in flight; TCP sockets (the database pool's and both connections') ${first.tcpSockets} → ${last.tcpSockets}; process warnings during the calls: ${report.warningsDuringCalls === 0 ? 'none' : report.warningsDuringCalls}`,
    `heap growth over ${fmt(report.calls)} calls: ${signed(last.heapUsedBytes - first.heapUsedBytes)} (${growsPerCall ? 'NOT bounded' : 'bounded'}: the last ${fmt(lastInterval.calls)} calls grew ${signed(lastInterval.heap)}) — ${
      growsPerCall
        ? `the heap grows per call (${slope.toFixed(0)} bytes/call over the second half, above ${LEAK_BYTES_PER_CALL}): a leak`
        : `the heap levels off (${slope.toFixed(0)} bytes/call over the second half, at most ${LEAK_BYTES_PER_CALL}): no per-call growth on completed calls`
    }`,
    `cancelled calls: ${c.calls} governed calls of trigger-long-running-operation (${c.operationSeconds} s) on the session's second connection (request timeout ${c.requestTimeoutSeconds} s; ${outcomes}); ${(c.operationSeconds + 1.5).toFixed(1)} s later (the server had finished every operation), that connection's signal holds ${slowAfter} 'abort' listeners (${slowBefore} before) and the process ${c.reading.tcpSockets} TCP sockets (${last.tcpSockets} before); heap ${signed(c.reading.heapUsedBytes - last.heapUsedBytes)} (${((c.reading.heapUsedBytes - last.heapUsedBytes) / c.calls / 1024).toFixed(0)} KB per cancelled call, the governed path's own share included); after ${fmt(c.afterMore.calls - c.reading.calls)} more echo calls still ${c.afterMore.abortListeners.slow ?? '?'} listeners and ${c.afterMore.tcpSockets} sockets — ${
      left >= c.calls
        ? 'one open POST SSE stream (request, socket, listener) per cancelled call, held until the connection closes: the SDK cancels a timed-out request with notifications/cancelled but keeps reading its response stream, and the server never answers a cancelled request'
        : left > 0
          ? `${left} left open`
          : 'none left open'
    }`,
    `process warnings: ${warnings}`,
  ];
}

function leastSquaresSlope(points: Array<[number, number]>): number {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}
