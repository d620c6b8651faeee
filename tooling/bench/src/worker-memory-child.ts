import { performance } from 'node:perf_hooks';
import { openDatabase } from '@veetbot/store-postgres';
import { openGovernedScene } from './governed-scene';

/**
 * The worker-memory benchmark's own process (spawned by worker-memory.bench.ts with
 * --expose-gc), so its RSS is a worker's alone: the composed pipeline on a migrated database
 * (BENCH_DATABASE_URL), warm-up calls, a reading, then
 * BENCH_CALLS governed calls from BENCH_CONCURRENCY callers, a reading. Prints one JSON line.
 */
interface Reading {
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly heapTotalBytes: number;
  readonly externalBytes: number;
}

const calls = Number(process.env.BENCH_CALLS ?? '10000');
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? '8');
const warmup = 200;

function reading(): Reading {
  // A full collection first: heapUsed is then what is live, not what awaits collection.
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { rssBytes: m.rss, heapUsedBytes: m.heapUsed, heapTotalBytes: m.heapTotal, externalBytes: m.external };
}

const atStart = reading();
const url = process.env.BENCH_DATABASE_URL;
if (!url) throw new Error('BENCH_DATABASE_URL is not set');
const database = await openDatabase({ url, poolSize: 10 });
const scene = await openGovernedScene(database, { callers: concurrency });

async function drive(total: number): Promise<void> {
  let remaining = total;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (remaining > 0) {
        remaining -= 1;
        await scene.call(worker);
      }
    }),
  );
}

await drive(warmup);
const before = reading();
const start = performance.now();
await drive(calls);
const seconds = (performance.now() - start) / 1000;
const after = reading();
const peakRssBytes = process.resourceUsage().maxRSS * 1024;
await scene.close();
await database.close();
process.stdout.write(
  `${JSON.stringify({ driver: database.driver, calls: scene.calls - warmup, concurrency, seconds, atStart, before, after, peakRssBytes })}\n`,
);
