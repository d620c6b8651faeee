import { runMeasuredChild } from './measured-child';
import { migrate, openDatabase } from '@veetbot/store-postgres';
import { skippedLine, type BenchContext } from './bench-context';
import { scratchDatabase, serverUrl } from './postgres-server';
import { fmt } from './harness';

const CALLS = Number(process.env.BENCH_MEMORY_CALLS ?? '10000');
const CONCURRENCY = 8;
const TARGET_MB = 200;

interface ChildReport {
  driver: string;
  calls: number;
  concurrency: number;
  seconds: number;
  atStart: { rssBytes: number; heapUsedBytes: number };
  before: { rssBytes: number; heapUsedBytes: number; heapTotalBytes: number; externalBytes: number };
  after: { rssBytes: number; heapUsedBytes: number; heapTotalBytes: number; externalBytes: number };
  peakRssBytes: number;
}

/**
 * Issue 3, Performance: "Worker memory after 10,000 calls printed; target under 200 MB RSS."
 * A separate process (so nothing else this run loaded counts) runs 10,000 governed calls from
 * 8 callers on PostgreSQL — a worker's database lives in another process — and reports RSS and
 * heap before and after. Skipped, with a printed line, when the server is unreachable.
 * BENCH_MEMORY_CALLS changes the count for a quick local check; the printed line always says
 * how many calls were made.
 */
export async function benchWorkerMemory(context: BenchContext): Promise<string[]> {
  if (!context.postgres.reachable) return [skippedLine(context.postgres, 'worker memory')];
  const scratch = await scratchDatabase(serverUrl(), 'veetbot_bench_memory');
  const where = 'PostgreSQL (the database in its own process)';
  const lines: string[] = [];
  try {
    const database = await openDatabase({ url: scratch.url });
    try {
      await migrate(database);
    } finally {
      await database.close();
    }
    const report = await runMeasuredChild<ChildReport>('worker-memory-child.ts', {
      BENCH_DATABASE_URL: scratch.url,
      BENCH_CALLS: String(CALLS),
      BENCH_CONCURRENCY: String(CONCURRENCY),
    });
    const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
    const rssAfter = report.after.rssBytes / 1024 / 1024;
    lines.push(
      `worker process on ${where}: ${fmt(report.calls)} governed calls from ${report.concurrency} callers in ${report.seconds.toFixed(1)} s (${fmt(report.calls / report.seconds)} calls/s)`,
      `RSS at process start ${mb(report.atStart.rssBytes)}; before the calls (composed, warmed up) ${mb(report.before.rssBytes)}, heap used ${mb(report.before.heapUsedBytes)}`,
      `RSS after ${fmt(report.calls)} calls ${mb(report.after.rssBytes)} (growth ${mb(report.after.rssBytes - report.before.rssBytes)}), heap used ${mb(report.after.heapUsedBytes)} of ${mb(report.after.heapTotalBytes)} (growth ${mb(report.after.heapUsedBytes - report.before.heapUsedBytes)}), external ${mb(report.after.externalBytes)}; peak RSS ${mb(report.peakRssBytes)}`,
      `RSS after ${fmt(report.calls)} calls: ${rssAfter.toFixed(1)} MB (target < ${TARGET_MB} MB: ${rssAfter < TARGET_MB ? 'met' : 'NOT met'})`,
    );
    return lines;
  } finally {
    await scratch.drop();
  }
}
