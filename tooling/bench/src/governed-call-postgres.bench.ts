import { migrate, openDatabase } from '@veetbot/store-postgres';
import type { BenchContext } from './bench-context';
import { skippedLine } from './bench-context';
import { openCommitFloor } from './commit-floor';
import { countPgStatements, measureCallCost } from './commit-counter';
import { openGovernedScene, SUBJECT_TOOL } from './governed-scene';
import { compare, fmt } from './harness';
import { scratchDatabase, serverUrl } from './postgres-server';

/** Eight concurrent callers (the figure; also the default batch concurrency cap). */
export const CONCURRENT_CALLERS = 8;

/**
 * Issue 3, Performance, first bullet: the governed durable call against the floor of the same
 * number of bare single-row commits through the same pool, on a fresh database on the
 * PostgreSQL server (dropped at the end). Sequential: governed time / floor time, target ≤ 1.25.
 * Eight concurrent callers: governed throughput as a fraction of the floor's, target ≥ 80%.
 */
export async function benchGovernedCallPostgres(context: BenchContext): Promise<string[]> {
  if (!context.postgres.reachable) return [skippedLine(context.postgres, 'governed call vs commit floor')];
  const scratch = await scratchDatabase(serverUrl(), 'veetbot_bench');
  const database = await openDatabase({ url: scratch.url, poolSize: 10 });
  try {
    await migrate(database);
    const scene = await openGovernedScene(database, { callers: CONCURRENT_CALLERS });
    for (let i = 0; i < 10; i++) await scene.call(0);
    // Count, do not assume: the floor gets exactly as many commits as the governed call made.
    const governedCost = await measureCallCost(database, 10, () => scene.call(0));
    const floor = await openCommitFloor(database, Math.round(governedCost.commits));
    const floorCost = await countPgStatements(10, () => floor.call());

    const lines = [
      `subject: one governed durable call of ${SUBJECT_TOOL} (NON_IDEMPOTENT, external_write) through executeToolCall with DurableDeps, steps 1–14, fresh call id each`,
      `governed call: ${fmt2(governedCost.commits)} commits and ${fmt2(governedCost.statements)} statements per call (counted at the Database handle and pg's Client.query); ${fmt2(governedCost.deferred)} of the commits not flushed (intent, claim: ADR 0015), the watermark and result flushed`,
      `floor: ${floor.commits} bare single-row commits per call (1 INSERT + ${floor.commits - 1} UPDATE by primary key, autocommitted) through the same pg Pool: ${fmt2(floorCost.statements)} statements per call, each its own transaction`,
    ];

    const seq = await compare(
      { name: 'floor', fn: () => floor.call() },
      { name: 'governed', fn: () => scene.call(0) },
      { batch: 40, rounds: 7, warmup: 1 },
    );
    lines.push(
      `sequential: governed ${fmt(seq.subject.opsPerSecond)} calls/s (${ms(seq.subject.nsPerOp)}/call), floor ${fmt(seq.baseline.opsPerSecond)} calls/s (${ms(seq.baseline.nsPerOp)}/call)`,
      `sequential ratio governed time / floor time: ${seq.ratio.toFixed(2)}× (issue 3's withdrawn target was ≤ 1.25×; context only)`,
    );

    const conc = await compare(
      { name: 'floor', fn: () => floor.call() },
      { name: 'governed', fn: (worker) => scene.call(worker) },
      { batch: 64, rounds: 5, warmup: 1, concurrency: CONCURRENT_CALLERS },
    );
    const fraction = (conc.subject.opsPerSecond / conc.baseline.opsPerSecond) * 100;
    lines.push(
      `${CONCURRENT_CALLERS} concurrent callers (one run each): governed ${fmt(conc.subject.opsPerSecond)} calls/s, floor ${fmt(conc.baseline.opsPerSecond)} calls/s`,
      `${CONCURRENT_CALLERS}-caller throughput governed / floor: ${fraction.toFixed(0)}% (issue 3's withdrawn target was ≥ 80%; context only)`,
    );
    await scene.close();
    return lines;
  } finally {
    await database.close();
    await scratch.drop();
  }
}

function ms(ns: number): string {
  return `${(ns / 1e6).toFixed(2)} ms`;
}

function fmt2(n: number | null): string {
  if (n === null || Number.isNaN(n)) return 'n/a';
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}
