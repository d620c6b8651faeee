import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createStores, migrate, openDatabase } from '@veetbot/store-postgres';
import pg from 'pg';
import { skippedLine, type BenchContext } from './bench-context';
import { buildApps } from './split-scene';
import { fmt } from './harness';
import { scratchDatabase, serverUrl } from './postgres-server';
import {
  assertNoDuplicates,
  closeGate,
  completedSteps,
  cpuBetween,
  cpuNow,
  duplicateCheck,
  openGate,
  settledFunctionStats,
  pendingRuns,
  startWorkers,
  submitPending,
} from './queue-scene';
import { composeRuntime, openRuntimeTenant } from './runtime-scene';
import { targetLine } from './targets';

/**
 * Issue 26, item 3 (docs/adr/0070): what N worker processes buy on one PostgreSQL. Each round
 * stores a backlog of one-call steps (demo.external_write, a run each, pending as the api stores
 * them) behind a gate, starts N built worker processes, opens the gate in one commit and times
 * the drain to the last completed step. 1, 2 and 4 workers in rotating order, ROUNDS rounds;
 * the median round per N. Then the database (and the outbox, the effect itself) is asked
 * whether anything ran twice: the bench fails if so.
 */
const WORKER_COUNTS = [1, 2, 4] as const;
const ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? '3');
const BACKLOG = Number(process.env.BENCH_SCALE_STEPS ?? '480');
const CONCURRENCY = 8;
const WARM_UP_PER_WORKER = 48;

interface Drain {
  readonly workers: number;
  readonly seconds: number;
  readonly workerCpuMs: number;
  readonly postgresCpuMs: number;
  readonly busy: number;
  /** Calls of veetbot_claim_pending and veetbot_open_step, and the claim's PostgreSQL time (ms), in the drain. */
  readonly claims: number;
  readonly openings: number;
  readonly claimMs: number;
}

export async function benchScaleOut(context: BenchContext): Promise<string[]> {
  if (!context.postgres.reachable) return [skippedLine(context.postgres, 'scale-out')];
  const scratch = await scratchDatabase(serverUrl(), 'veetbot_bench_scale');
  const dataDir = await mkdtemp(join(tmpdir(), 'veetbot-bench-scale-'));
  const database = await openDatabase({ url: scratch.url, poolSize: 8 });
  // The bench's own reads and the gate, as the server's superuser (no tenant role, no RLS).
  const pool = new pg.Pool({ connectionString: scratch.url, max: 2 });
  try {
    await migrate(database);
    // Per-function calls and time (pg_stat_user_functions) for every connection opened from here on.
    await pool.query(`alter database ${scratch.name} set track_functions = 'pl'`);
    await buildApps();
    const operatorConfig = join(dataDir, 'operator.json');
    await writeFile(operatorConfig, JSON.stringify({ mcp: { servers: [] } }));
    const runtime = composeRuntime(database, dataDir);
    const tenant = await openRuntimeTenant(runtime, database, {
      name: 'scale-out bench',
      agentId: 'bench-scale',
      scopes: ['demo.write'],
      runs: 1,
    });
    const sessionId = (await createStores(database).runs.get(tenant.tenantId, tenant.runIds[0]!))!.sessionId;
    const env = {
      DATABASE_URL: scratch.url,
      VEETBOT_DATA_DIR: dataDir,
      VEETBOT_OPERATOR_CONFIG: operatorConfig,
      VEETBOT_WORKER_CONCURRENCY: String(CONCURRENCY),
    };
    const drains: Drain[] = [];
    let total = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate the order, so neither the first nor the last slot of a round belongs to one N.
      const order = WORKER_COUNTS.map((_, i) => WORKER_COUNTS[(i + round) % WORKER_COUNTS.length]!);
      for (const n of order) {
        const runs = await pendingRuns(runtime, { ...tenant, sessionId }, BACKLOG);
        await closeGate(pool, runs);
        for (let i = 0; i < runs.length; i += 16)
          await Promise.all(
            runs.slice(i, i + 16).map((run) => submitPending(database, tenant.tenantId, tenant.principal, run, `c-${run}`)),
          );
        total += runs.length;
        const workers = await startWorkers(n, env);
        try {
          // A warm-up drain first: a fresh process plans each hot-path function anew on every
          // pooled connection (PL/pgSQL's custom plans, the first five calls each), which is
          // start-up, not what another worker costs in steady state.
          const warmRuns = await pendingRuns(runtime, { ...tenant, sessionId }, WARM_UP_PER_WORKER * n);
          await closeGate(pool, warmRuns);
          for (const run of warmRuns) await submitPending(database, tenant.tenantId, tenant.principal, run, `w-${run}`);
          total += warmRuns.length;
          await openGate(pool, warmRuns);
          while ((await completedSteps(pool, warmRuns)) < warmRuns.length) await new Promise((r) => setTimeout(r, 20));
          const statsBefore = await settledFunctionStats(pool);
          const before = await cpuNow(workers.map((w) => w.pid));
          const started = performance.now();
          await openGate(pool, runs);
          while ((await completedSteps(pool, runs)) < runs.length) {
            if (performance.now() - started > 300_000) throw new Error(`${n} workers did not drain ${runs.length} steps in 5 minutes`);
            await new Promise((r) => setTimeout(r, 10));
          }
          const seconds = (performance.now() - started) / 1000;
          const cpu = cpuBetween(before, await cpuNow(workers.map((w) => w.pid)));
          const busy = workers.reduce((sum, w) => sum + w.busyOpenings(), 0);
          const statsAfter = await settledFunctionStats(pool);
          const delta = (name: string) => ({
            calls: (statsAfter.get(name)?.calls ?? 0) - (statsBefore.get(name)?.calls ?? 0),
            ms: (statsAfter.get(name)?.ms ?? 0) - (statsBefore.get(name)?.ms ?? 0),
          });
          const claim = delta('veetbot_claim_pending');
          drains.push({
            workers: n,
            seconds,
            workerCpuMs: cpu.workers,
            postgresCpuMs: cpu.postgres,
            busy,
            claims: claim.calls,
            claimMs: claim.ms,
            openings: delta('veetbot_open_step').calls,
          });
        } finally {
          await Promise.all(workers.map((w) => w.stop()));
        }
      }
    }
    const check = assertNoDuplicates(await duplicateCheck(pool, [tenant.tenantId], join(dataDir, 'outbox.log')), total);
    const rateOf = (d: Drain) => BACKLOG / d.seconds;
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const byN = (n: number) => drains.filter((d) => d.workers === n);
    const rate = (n: number) => median(byN(n).map(rateOf));
    const perStep = (n: number, pick: (d: Drain) => number) => median(byN(n).map((d) => pick(d) / BACKLOG));
    const lines = [
      `PostgreSQL fresh database ${scratch.name}; built worker processes (concurrency ${CONCURRENCY} each, poll 200 ms) on one PostgreSQL; each round a backlog of ${BACKLOG} one-call steps of demo.external_write (a run each, stored pending as the api stores them) released in one commit, timed to the last completed step, after a warm-up drain of ${WARM_UP_PER_WORKER} steps per worker; ${ROUNDS} rounds of 1, 2 and 4 workers in rotating order, median round per count`,
      ...WORKER_COUNTS.map(
        (n) =>
          `${n} worker${n === 1 ? '' : 's'}: ${fmt(rate(n))} steps/s (rounds ${byN(n)
            .map((d) => fmt(rateOf(d)))
            .join(
              ', ',
            )}); CPU per step: workers ${perStep(n, (d) => d.workerCpuMs).toFixed(2)} ms, PostgreSQL ${perStep(n, (d) => d.postgresCpuMs).toFixed(2)} ms; per step: ${perStep(n, (d) => d.claims).toFixed(2)} claims (${perStep(n, (d) => d.claimMs).toFixed(2)} ms in PostgreSQL), ${perStep(n, (d) => d.openings).toFixed(2)} openings, ${perStep(n, (d) => d.busy).toFixed(2)} found busy (another worker opened the run first)`,
      ),
      check,
      targetLine('scale-2-vs-1-workers', rate(2) / rate(1)),
      targetLine('scale-4-vs-1-workers', rate(4) / rate(1)),
    ];
    return lines;
  } finally {
    await pool.end();
    await database.close();
    await scratch.drop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }
}
