import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { migrate, openDatabase } from '@veetbot/store-postgres';
import { openCommitFloor } from './commit-floor';
import { measureCallCost } from './commit-counter';
import { openGovernedScene } from './governed-scene';
import { compare, fmt } from './harness';

/**
 * Issue 3, Performance: "PGlite figures printed too". The same governed call on the embedded
 * default, in memory and in a data folder, sequential (PGlite has one connection: concurrency
 * only queues on its mutex), each next to its own floor of bare single-row commits through the
 * same PGlite connection.
 */
export async function benchGovernedCallPglite(): Promise<string[]> {
  const lines: string[] = [];
  const folder = await mkdtemp(path.join(tmpdir(), 'veetbot-bench-pglite-'));
  try {
    for (const [label, dataDir] of [
      ['PGlite in memory', 'memory://'],
      ['PGlite data dir', path.join(folder, 'data')],
    ] as const) {
      lines.push(...(await one(label, dataDir)));
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
  return lines;
}

async function one(label: string, dataDir: string): Promise<string[]> {
  const database = await openDatabase({ dataDir });
  try {
    await migrate(database);
    const scene = await openGovernedScene(database, { callers: 1 });
    for (let i = 0; i < 20; i++) await scene.call(0);
    const cost = await measureCallCost(database, 10, () => scene.call(0));
    const floor = await openCommitFloor(database, Math.round(cost.commits));
    const r = await compare(
      { name: 'floor', fn: () => floor.call() },
      { name: 'governed', fn: () => scene.call(0) },
      { batch: 40, rounds: 7, warmup: 1 },
    );
    await scene.close();
    return [
      `${label}: governed ${fmt(r.subject.opsPerSecond)} calls/s (${(r.subject.nsPerOp / 1e6).toFixed(2)} ms/call, ${cost.commits} commits), floor of ${floor.commits} bare commits ${fmt(r.baseline.opsPerSecond)} calls/s (${(r.baseline.nsPerOp / 1e6).toFixed(2)} ms/call)`,
      `${label}: sequential ratio governed time / floor time: ${r.ratio.toFixed(2)}× (issue 3's withdrawn target was ≤ 1.25×; context only)`,
    ];
  } finally {
    await database.close();
  }
}
