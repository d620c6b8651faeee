import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { VeetbotClient } from '@veetbot/client';
import { createStores, migrate, openDatabase } from '@veetbot/store-postgres';
import pg from 'pg';
import { skippedLine, type BenchContext } from './bench-context';
import { percentile } from './api-throughput.bench';
import { buildApps, freePort, startNode } from './split-scene';
import { fmt } from './harness';
import { scratchDatabase, serverUrl } from './postgres-server';
import { assertNoDuplicates, duplicateCheck, pendingRuns, startWorkers, submitPending, TOOL } from './queue-scene';
import { composeRuntime, openRuntimeTenant } from './runtime-scene';
import { targetLine } from './targets';

/**
 * Issue 26, item 3 (docs/adr/0070): one tenant floods the step queue (a standing backlog of
 * pending one-call steps, topped up as they drain) while a quiet tenant's clients submit one
 * step at a time through the built api and wait for each (the split deployment: api process, two
 * worker processes, one PostgreSQL; every tenant under the operator's quota). The quiet
 * tenant's step latency with the neighbour against the same clients alone, in alternating
 * rounds: noisy-neighbour-p99 = p99 with / p99 alone (goal ≤ 2×). The database is sampled while
 * the neighbour floods: its steps in flight never exceed the quota.
 */
const QUIET_CLIENTS = 2;
const WORKERS = 2;
const CONCURRENCY = 8;
const QUOTA = Number(process.env.BENCH_NOISY_QUOTA ?? '2');
const FLOOD_BACKLOG = 200;
const ROUNDS = Number(process.env.BENCH_NOISY_ROUNDS ?? '4');
const WINDOW_MS = Number(process.env.BENCH_NOISY_WINDOW_MS ?? '6000');
const REPO = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

export async function benchNoisyNeighbour(context: BenchContext): Promise<string[]> {
  if (!context.postgres.reachable) return [skippedLine(context.postgres, 'noisy neighbour')];
  const scratch = await scratchDatabase(serverUrl(), 'veetbot_bench_noisy');
  const dataDir = await mkdtemp(join(tmpdir(), 'veetbot-bench-noisy-'));
  const database = await openDatabase({ url: scratch.url, poolSize: 8 });
  // The bench's own reads and samples, as the server's superuser (no tenant role, no RLS).
  const pool = new pg.Pool({ connectionString: scratch.url, max: 3 });
  const stops: Array<() => Promise<void>> = [];
  try {
    await migrate(database);
    await buildApps();
    const operatorConfig = join(dataDir, 'operator.json');
    await writeFile(operatorConfig, JSON.stringify({ mcp: { servers: [] } }));
    const base = {
      DATABASE_URL: scratch.url,
      VEETBOT_DATA_DIR: dataDir,
      VEETBOT_OPERATOR_CONFIG: operatorConfig,
      VEETBOT_TENANT_STEP_QUOTA: String(QUOTA),
    };
    const port = await freePort();
    const key = `vbk_bench_${randomBytes(16).toString('base64url')}`;
    const api = startNode(join(REPO, 'apps/api/dist/main.mjs'), ['--api-only'], {
      ...base,
      VEETBOT_PORT: String(port),
      VEETBOT_DEMO_API_KEY: key,
    });
    stops.push(async () => {
      if (api.child.exitCode === null) api.child.kill('SIGTERM');
      await api.exited;
    });
    await api.waitFor(/veetbot listening on /);
    const workers = await startWorkers(WORKERS, { ...base, VEETBOT_WORKER_CONCURRENCY: String(CONCURRENCY) });
    stops.push(() => Promise.all(workers.map((w) => w.stop())).then(() => undefined));

    // The quiet tenant: the api's demo tenant, through HTTP, a run per client.
    const client = new VeetbotClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: key });
    const session = await client.openSession({ agent_id: 'bench-quiet', enabled_tools: [TOOL] });
    const quietRuns = await Promise.all(
      Array.from({ length: QUIET_CLIENTS }, () => client.createRun({ session_id: session.id, deadline_seconds: 3_600 })),
    );
    const nextStep = quietRuns.map(() => 1);
    const quietStep = async (c: number): Promise<number> => {
      const n = nextStep[c]!++;
      const t0 = performance.now();
      const outcome = await client.submitStepAndWait(quietRuns[c]!.id, {
        step_number: n,
        calls: [{ call_id: `quiet_${c}_${n}`, tool_name: TOOL, arguments: { line: `quiet ${c} ${n}` }, context_trust: ['user'] }],
        wait_seconds: 30,
      });
      if (outcome.status !== 'completed' || outcome.items[0]?.outcome.status !== 'succeeded')
        throw new Error(`a quiet step did not succeed: ${JSON.stringify(outcome).slice(0, 300)}`);
      return performance.now() - t0;
    };
    const drive = async (ms: number, into: number[] | null) => {
      const end = performance.now() + ms;
      await Promise.all(
        quietRuns.map(async (_, c) => {
          while (performance.now() < end) {
            const took = await quietStep(c);
            if (into !== null && performance.now() <= end) into.push(took);
          }
        }),
      );
    };

    // The noisy tenant: its own tenant and session, steps stored straight into the queue.
    const runtime = composeRuntime(database, dataDir);
    const noisy = await openRuntimeTenant(runtime, database, {
      name: 'noisy neighbour',
      agentId: 'bench-noisy',
      scopes: ['demo.write'],
      runs: 1,
    });
    const noisySession = (await createStores(database).runs.get(noisy.tenantId, noisy.runIds[0]!))!.sessionId;
    const flood = startFlood(
      pool,
      async (count) => {
        const runs = await pendingRuns(runtime, { ...noisy, sessionId: noisySession }, count);
        for (let i = 0; i < runs.length; i += 16)
          await Promise.all(runs.slice(i, i + 16).map((run) => submitPending(database, noisy.tenantId, noisy.principal, run, `n-${run}`)));
        await pool.query(`select pg_notify('veetbot_steps', '')`);
      },
      noisy.tenantId,
    );

    await drive(2_000, null);
    const alone: number[] = [];
    const beside: number[] = [];
    let noisyDone = 0;
    let besideSeconds = 0;
    let maxInFlight = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const withNeighbour of round % 2 === 0 ? [false, true] : [true, false]) {
        if (!withNeighbour) {
          await drive(WINDOW_MS, alone);
          continue;
        }
        // The backlog stands before the quiet clients start.
        await flood.start();
        const before = await completedOf(pool, noisy.tenantId);
        await drive(WINDOW_MS, beside);
        noisyDone += (await completedOf(pool, noisy.tenantId)) - before;
        besideSeconds += WINDOW_MS / 1000;
        maxInFlight = Math.max(maxInFlight, await flood.stop());
        // Drained before the next window alone.
        while ((await openOf(pool, noisy.tenantId)) > 0) await new Promise((r) => setTimeout(r, 50));
      }
    }
    const quietTenant = (await pool.query(`select tenant_id from sessions where id = $1::uuid`, [session.id])).rows[0]?.tenant_id;
    const all = (await pool.query(`select count(*)::int as n from steps`)).rows[0]?.n;
    const check = assertNoDuplicates(
      await duplicateCheck(pool, [String(quietTenant), noisy.tenantId], join(dataDir, 'outbox.log')),
      Number(all ?? 0),
    );
    if (maxInFlight > QUOTA) throw new Error(`the noisy tenant had ${maxInFlight} steps in flight at once; its quota is ${QUOTA}`);
    const p = (values: number[], q: number) => percentile(values, q).toFixed(1);
    const rate = (values: number[]) => values.length / ((ROUNDS * WINDOW_MS) / 1000);
    return [
      `PostgreSQL fresh database ${scratch.name}; built api (--api-only) and ${WORKERS} worker processes (concurrency ${CONCURRENCY} each: ${WORKERS * CONCURRENCY} slots); VEETBOT_TENANT_STEP_QUOTA=${QUOTA} (every tenant); quiet tenant: ${QUIET_CLIENTS} HTTP clients, each one step at a time on its own run, waiting for the outcome; noisy tenant: a standing backlog of ${FLOOD_BACKLOG} pending one-call steps (a run each), topped up as it drains; ${ROUNDS} alternating rounds of ${WINDOW_MS / 1000} s per side`,
      `quiet tenant alone: ${fmt(rate(alone))} steps/s, latency p50 ${p(alone, 50)} ms, p99 ${p(alone, 99)} ms (${fmt(alone.length)} steps)`,
      `quiet tenant beside the flood: ${fmt(rate(beside))} steps/s, latency p50 ${p(beside, 50)} ms, p99 ${p(beside, 99)} ms (${fmt(beside.length)} steps); the noisy tenant completed ${fmt(noisyDone / besideSeconds)} steps/s meanwhile`,
      `the noisy tenant's steps in flight, sampled from the database every 25 ms while it flooded: at most ${maxInFlight} (quota ${QUOTA})`,
      check,
      targetLine('noisy-neighbour-p99', percentile(beside, 99) / percentile(alone, 99)),
    ];
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await pool.end();
    await database.close();
    await scratch.drop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Steps of the tenant completed so far. */
async function completedOf(pool: pg.Pool, tenantId: string): Promise<number> {
  const { rows } = await pool.query(`select count(*)::int as n from steps where tenant_id = $1 and status = 'completed'`, [tenantId]);
  return Number(rows[0]?.n ?? 0);
}

/** Steps of the tenant not yet completed. */
async function openOf(pool: pg.Pool, tenantId: string): Promise<number> {
  const { rows } = await pool.query(`select count(*)::int as n from steps where tenant_id = $1 and status <> 'completed'`, [tenantId]);
  return Number(rows[0]?.n ?? 0);
}

/**
 * The flood: while started, keeps FLOOD_BACKLOG of the tenant's steps pending (`add` stores
 * more) and samples its steps in flight (running under a live lease) every 25 ms. `stop`
 * returns the most it saw at once.
 */
function startFlood(pool: pg.Pool, add: (count: number) => Promise<void>, tenantId: string) {
  let running = false;
  let loops: Promise<unknown> = Promise.resolve();
  let most = 0;
  /** One top-up: up to 32 more at a time, so the first steps reach the queue at once. */
  const topUpOnce = async (): Promise<number> => {
    const { rows } = await pool.query(`select count(*)::int as n from steps where tenant_id = $1 and status = 'pending'`, [tenantId]);
    const missing = FLOOD_BACKLOG - Number(rows[0]?.n ?? 0);
    if (missing > 0) await add(Math.min(missing, 32));
    return missing;
  };
  const topUp = async () => {
    while (running) {
      if ((await topUpOnce()) <= 32) await new Promise((r) => setTimeout(r, 50));
    }
  };
  const sample = async () => {
    while (running) {
      const { rows } = await pool.query(
        `select count(*)::int as n from steps s join runs r on r.id = s.run_id
         where s.tenant_id = $1 and s.status = 'running' and r.lease_owner is not null and r.lease_expires_at > now()`,
        [tenantId],
      );
      most = Math.max(most, Number(rows[0]?.n ?? 0));
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  return {
    /** Resolves once the backlog stands. */
    async start() {
      running = true;
      most = 0;
      while ((await topUpOnce()) > 32);
      loops = Promise.all([topUp(), sample()]);
    },
    async stop(): Promise<number> {
      running = false;
      await loops;
      return most;
    },
  };
}
