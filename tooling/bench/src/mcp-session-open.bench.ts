import { runMeasuredChild } from './measured-child';
import { targetLine } from './targets';
import type { BenchContext } from './bench-context';
import { openBenchDatabase, pgliteReason, runsOnPostgres, type BenchDatabase } from './bench-database';

const TOOLS = 500;

interface Reading {
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly externalBytes: number;
}

interface ChildReport {
  readonly driver: string;
  readonly tools: number;
  readonly registered: number;
  readonly rejected: number;
  readonly coldMs: number;
  readonly rounds: number;
  readonly oursMs: number[];
  readonly baselineMs: number[];
  readonly oursMedianMs: number;
  readonly baselineMedianMs: number;
  readonly memoryOpenMs: number;
  readonly breakdown: {
    readonly admitCalls: number;
    readonly admitMs: number;
    readonly admitInRegistryMs: number;
    readonly registerDynamicMs: number;
    readonly catalogMs: number;
    readonly eventsMs: number;
    readonly pinMs: number;
    readonly sessionRowMs: number;
  };
  readonly before: Reading;
  readonly after: Reading;
}

/**
 * Issue 4, Performance, second half: session open with discovery of a stdio server offering 500
 * tools (servers/many-tools-server.mjs: small draft-07 schemas), timed and its memory measured,
 * in a process of its own (mcp-session-open-child.ts). Session open is what a worker does before
 * the first model request: the adapter spawns the server, initialize, tools/list, maps and admits
 * 500 schemas, registerDynamic, records the catalog generation and the mcp.* events (one transaction), then the
 * pin and the session row. Baseline, in the same rounds: the SDK's Client spawning the same
 * server, initialize, tools/list — the protocol part alone.
 */
export async function benchMcpSessionOpen(context: BenchContext): Promise<string[]> {
  // PGlite lives in one process: the child opens its own in memory. PostgreSQL: the child
  // opens a migrated scratch database, dropped here afterwards.
  const db: BenchDatabase | null = runsOnPostgres(context) ? await openBenchDatabase(context, 'veetbot_bench_mcp_open') : null;
  let report: ChildReport;
  try {
    report = await runMeasuredChild<ChildReport>('mcp-session-open-child.ts', {
      BENCH_TOOLS: String(TOOLS),
      ...(db?.url == null ? {} : { BENCH_DATABASE_URL: db.url }),
    });
  } finally {
    await db?.close();
  }
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  const delta = (bytes: number) => `${bytes >= 0 ? '+' : '−'}${mb(Math.abs(bytes))}`;
  const b = report.breakdown;
  const rest =
    report.memoryOpenMs - (b.admitMs - b.admitInRegistryMs) - b.registerDynamicMs - b.catalogMs - b.eventsMs - b.pinMs - b.sessionRowMs;
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  const where = db === null ? `PGlite in memory in the child (${pgliteReason(context)})` : db.label;
  return [
    `session open with discovery of a stdio server offering ${report.tools} tools (registered ${report.registered}, rejected ${report.rejected}) on ${where}`,
    `session open: median ${ms(report.oursMedianMs)} over ${report.rounds} rounds (${report.oursMs.map((x) => x.toFixed(0)).join(', ')} ms); first of the process (cold) ${ms(report.coldMs)}`,
    `baseline, the SDK Client alone (spawn, initialize, tools/list): median ${ms(report.baselineMedianMs)} (${report.baselineMs.map((x) => x.toFixed(0)).join(', ')} ms); ratio ${(report.oursMedianMs / report.baselineMedianMs).toFixed(2)}×`,
    `memory of one open session (after full GC, its adapter, registry and server kept alive): RSS ${delta(report.after.rssBytes - report.before.rssBytes)} (${mb(report.before.rssBytes)} → ${mb(report.after.rssBytes)}), heap used ${delta(report.after.heapUsedBytes - report.before.heapUsedBytes)} (${mb(report.before.heapUsedBytes)} → ${mb(report.after.heapUsedBytes)}), external ${delta(report.after.externalBytes - report.before.externalBytes)}`,
    `where one open's ${ms(report.memoryOpenMs)} goes (instrumented): schema admission ${b.admitCalls}× ${ms(b.admitMs)} (${ms(b.admitMs - b.admitInRegistryMs)} in the adapter's mapping, ${ms(b.admitInRegistryMs)} again inside registerDynamic); registerDynamic ${ms(b.registerDynamicMs)}; catalog generation and its mcp.* events (one transaction) ${ms(b.catalogMs)}; other events ${ms(b.eventsMs)}; pin ${ms(b.pinMs)}; session row ${ms(b.sessionRowMs)}; the rest (spawn, initialize, tools/list, mapping) ${ms(rest)}`,
    targetLine('session-open-500', report.oursMedianMs / 1000),
  ];
}
