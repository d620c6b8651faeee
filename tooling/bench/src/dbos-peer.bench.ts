import { migrate, openDatabase } from '@veetbot/store-postgres';
import type { BenchContext } from './bench-context';
import { skippedLine } from './bench-context';
import { countPgStatements } from './commit-counter';
import { openDbosPeer } from './dbos-peer';
import { CONCURRENT_CALLERS } from './governed-call-postgres.bench';
import { openGovernedScene } from './governed-scene';
import { compare, fmt, verdict } from './harness';
import { scratchDatabase, serverUrl } from './postgres-server';

/**
 * Issue 3, Performance, second bullet: the governed call against the peer a user would pick
 * instead — a DBOS Transact workflow with one no-op step on the same PostgreSQL server (its
 * system database a fresh database of its own), sequential and with eight concurrent callers,
 * measured in alternating rounds with the governed call. Target: governed throughput ≥ 2.5 ×
 * DBOS's. If DBOS cannot run here, the line says why and no figure is printed.
 */
export async function benchDbosPeer(context: BenchContext): Promise<string[]> {
  if (!context.postgres.reachable) return [skippedLine(context.postgres, 'governed call vs DBOS Transact')];
  const ours = await scratchDatabase(serverUrl(), 'veetbot_bench');
  const theirs = await scratchDatabase(serverUrl(), 'veetbot_bench_dbos');
  const database = await openDatabase({ url: ours.url, poolSize: 10 });
  try {
    await migrate(database);
    const scene = await openGovernedScene(database, { callers: CONCURRENT_CALLERS });
    for (let i = 0; i < 10; i++) await scene.call(0);
    const opened = await openDbosPeer(theirs);
    if (!opened.ok) {
      return [`DBOS Transact could not run here, so there is no peer figure: ${opened.reason}`];
    }
    const { peer } = opened;
    try {
      for (let i = 0; i < 10; i++) await peer.call();
      const dbosCost = await countPgStatements(10, () => peer.call());
      const lines = [
        `peer: @dbos-inc/dbos-sdk ${opened.version}, a workflow with one no-op step (DBOS.registerWorkflow + DBOS.runStep), invoked directly, system database on the same server, pool 10`,
        `DBOS workflow: ${dbosCost.commitStatements} BEGIN…COMMIT transactions and ${dbosCost.statements} statements in all per workflow (counted at pg's Client.query)`,
      ];
      const seq = await compare(
        { name: 'dbos', fn: () => peer.call() },
        { name: 'governed', fn: () => scene.call(0) },
        { batch: 40, rounds: 7, warmup: 1 },
      );
      const seqRatio = seq.subject.opsPerSecond / seq.baseline.opsPerSecond;
      lines.push(
        `sequential: governed ${fmt(seq.subject.opsPerSecond)} calls/s, DBOS ${fmt(seq.baseline.opsPerSecond)} workflows/s`,
        `sequential throughput governed / DBOS: ${seqRatio.toFixed(2)}× ${verdict(seqRatio, 2.5, 'at least')}`,
      );
      const conc = await compare(
        { name: 'dbos', fn: () => peer.call() },
        { name: 'governed', fn: (worker) => scene.call(worker) },
        { batch: 64, rounds: 5, warmup: 1, concurrency: CONCURRENT_CALLERS },
      );
      const concRatio = conc.subject.opsPerSecond / conc.baseline.opsPerSecond;
      lines.push(
        `${CONCURRENT_CALLERS} concurrent callers: governed ${fmt(conc.subject.opsPerSecond)} calls/s, DBOS ${fmt(conc.baseline.opsPerSecond)} workflows/s`,
        `${CONCURRENT_CALLERS}-caller throughput governed / DBOS: ${concRatio.toFixed(2)}× ${verdict(concRatio, 2.5, 'at least')}`,
      );
      return lines;
    } finally {
      await peer.close();
      await scene.close();
    }
  } finally {
    await database.close();
    await ours.drop();
    await theirs.drop();
  }
}
