import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { migrate, openDatabase } from '@veetbot/store-postgres';
import { skippedLine, type BenchContext } from './bench-context';
import { composeRuntime, openRuntimeTenant } from './runtime-scene';
import { fmt } from './harness';
import { targetLine, unmeasuredLine } from './targets';
import { postgresCpuSnapshot, postgresCpuSpent, type PostgresCpuSnapshot } from './postgres-cpu';
import { startSplitScene } from './split-scene';
import { cpuPerOp, openStatementStats, recordSceneCost, SceneTally, statementLines, type StatementStats } from './statement-stats';

/**
 * Issue 14, goals 3 and 7: one-call steps of `demo.external_write` per second through the HTTP
 * API — the built api process (`apps/api/dist/main.mjs --api-only`) and the built worker
 * process (`apps/worker/dist/main.mjs`), plain node as `pnpm start:api` / `start:worker` run
 * them (docs/adr/0041), 16 concurrent clients, each on its own run, each request waiting for its
 * outcome — against the same steps in process (`Runtime.submitStep`, 16 callers, own runs) on the
 * same fresh PostgreSQL database, in alternating rounds (each side's warm-up first), with a
 * window of sequential HTTP steps (one client) in every round. Goals: http-vs-inprocess-16
 * (HTTP throughput ≥ 70% of in-process) and http-p99-16 (p99 latency at 16 clients ≤ 4 × the
 * median sequential step latency). Then the worker is driven on to 10,000 calls in all
 * (8-call `math.evaluate` steps, a parallel batch each) and its RSS read: worker-rss-10k
 * (< 150 MB; no forced GC — a production process gets none).
 */
const CLIENTS = 16;
const TOOL = 'demo.external_write';
const WORKER_CALLS = Number(process.env.BENCH_WORKER_CALLS ?? '10000');
const FILL_BATCH = 8;
const WARMUP_MS = Number(process.env.BENCH_API_WARMUP_MS ?? '3000');
const MEASURE_MS = Number(process.env.BENCH_API_MEASURE_MS ?? '15000');
/** The measured time is split into this many rounds per side, alternated (HTTP first, then in process first, …). */
const ROUNDS = 4;

interface Phase {
  readonly calls: number;
  readonly seconds: number;
  readonly latenciesMs: number[];
  /** CPU milliseconds spent during the measured windows, by process (null where unreadable). */
  readonly cpuMs: Readonly<Record<CpuOwner, number | null>>;
}

type CpuOwner = 'api' | 'worker' | 'postgres' | 'self';

export async function benchApiThroughput(context: BenchContext): Promise<string[]> {
  if (!context.postgres.reachable) return [skippedLine(context.postgres, 'API throughput')];
  const scene = await startSplitScene({
    name: 'api',
    workerEnv: { VEETBOT_WORKER_CONCURRENCY: String(CLIENTS), VEETBOT_WORKER_POLL_MS: '200' },
  });
  const { scratch, dataDir, api, worker, client } = scene;
  try {
    // Through HTTP: one session, a run per client, steps submitted one after another per run.
    const session = await client.openSession({ agent_id: 'bench-api', enabled_tools: [TOOL, 'math.evaluate'] });
    // CLIENTS runs for the concurrent side, one for the sequential window.
    const httpRuns = await Promise.all(
      Array.from({ length: CLIENTS + 1 }, () => client.createRun({ session_id: session.id, deadline_seconds: 3_600 })),
    );
    let httpCalls = 0;
    const httpStep = async (run: number, n: number) => {
      httpCalls += 1;
      const outcome = await client.submitStepAndWait(httpRuns[run]!.id, {
        step_number: n,
        calls: [{ call_id: `call_${run}_${n}`, tool_name: TOOL, arguments: { line: `effect ${run} ${n}` }, context_trust: ['user'] }],
        wait_seconds: 30,
      });
      if (outcome.status !== 'completed' || outcome.items[0]?.outcome.status !== 'succeeded')
        throw new Error(`HTTP call did not succeed: ${JSON.stringify(outcome).slice(0, 300)}`);
    };
    const httpSide = side(httpStep);
    const sequentialSide = side((_, n) => httpStep(CLIENTS, n), 1);

    // In process: the same calls on the pipeline (Runtime.submitStep), same database, while the
    // api and worker processes stay up (idle but for the worker's poll) so the two sides are
    // measured in alternating rounds and load on the machine hits both alike.
    const database = await openDatabase({ url: scratch.url, poolSize: 10 });
    let http: Phase;
    let inProcess: Phase;
    let sequential: Phase;
    let apiRss: number | null;
    let workerRss: number | null;
    let workerPeak: number | null;
    let fillSeconds: number;
    // Issue 27: PostgreSQL's statements per side, reset before each measured window.
    let stats: StatementStats | null = null;
    const httpTally = new SceneTally(`one-call step through HTTP (api + worker), ${CLIENTS} clients`);
    const inProcessTally = new SceneTally(
      `one-call step in process (Runtime.submitStep), ${CLIENTS} callers, beside the idle api and worker`,
    );
    try {
      stats = await openStatementStats(context);
      await migrate(database);
      const runtime = composeRuntime(database, dataDir);
      const {
        tenantId,
        principal,
        runIds: runs,
      } = await openRuntimeTenant(runtime, database, {
        name: 'API bench, in process',
        agentId: 'bench-inprocess',
        scopes: ['demo.write'],
        runs: CLIENTS,
      });
      const inProcessSide = side(async (caller, n) => {
        const outcome = await runtime.submitStep({
          tenantId,
          runId: runs[caller]!,
          stepNumber: n,
          principal,
          calls: [
            {
              callId: `call_${caller}_${n}`,
              toolName: TOOL,
              arguments: { line: `effect ${caller} ${n}` },
              contextTrust: ['user'],
            },
          ],
        });
        if (outcome.items[0]?.outcome.status !== 'succeeded')
          throw new Error(`in-process call did not succeed: ${JSON.stringify(outcome).slice(0, 300)}`);
      });
      await httpSide.drive(WARMUP_MS, false);
      await inProcessSide.drive(WARMUP_MS, false);
      await sequentialSide.drive(WARMUP_MS / 4, false);
      const window = MEASURE_MS / ROUNDS;
      const processes = { api: api.child.pid, worker: worker.child.pid };
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? [httpSide, inProcessSide] : [inProcessSide, httpSide];
        for (const s of order) {
          await stats?.reset();
          const callsBefore = s.phase().calls;
          const before = await cpuSnapshot(context, processes);
          await s.drive(window, true);
          const spent = cpuSpent(before, await cpuSnapshot(context, processes));
          s.addCpu(spent);
          (s === httpSide ? httpTally : inProcessTally).add({
            ops: s.phase().calls - callsBefore,
            cpuMs: spent.postgres,
            rows: stats === null ? [] : await stats.read([scratch.name]),
          });
        }
        await sequentialSide.drive(window / 3, true);
      }
      http = httpSide.phase();
      inProcess = inProcessSide.phase();
      sequential = sequentialSide.phase();
      apiRss = await rssOf(api.child.pid);
      // On to WORKER_CALLS calls in all through the worker: 8-call steps (a parallel batch of
      // math.evaluate), CLIENTS at a time, each client on a run of its own.
      const fillRuns = await Promise.all(
        Array.from({ length: CLIENTS }, () => client.createRun({ session_id: session.id, deadline_seconds: 3_600 })),
      );
      const fillStarted = performance.now();
      await Promise.all(
        fillRuns.map(async (run, caller) => {
          for (let n = 1; httpCalls < WORKER_CALLS; n++) {
            httpCalls += FILL_BATCH;
            const body = {
              step_number: n,
              calls: Array.from({ length: FILL_BATCH }, (_, i) => ({
                call_id: `fill_${n}_${i}`,
                tool_name: 'math.evaluate',
                arguments: { expression: `${n} * ${caller} + ${i}` },
                context_trust: ['user' as const],
              })),
              wait_seconds: 30,
            };
            // A step still running after the api's longest wait is asked for again: the same
            // batch under the same number is the same step (it waits, it never runs twice).
            let outcome = await client.submitStepAndWait(run.id, body);
            for (let again = 0; outcome.status !== 'completed' && again < 4; again++)
              outcome = await client.submitStepAndWait(run.id, body);
            if (outcome.status !== 'completed') throw new Error(`a fill step did not complete: ${JSON.stringify(outcome).slice(0, 300)}`);
          }
        }),
      );
      fillSeconds = (performance.now() - fillStarted) / 1000;
      workerRss = await rssOf(worker.child.pid);
      workerPeak = await rssOf(worker.child.pid, 'VmHWM');
    } finally {
      await database.close();
      await stats?.close();
    }
    await scene.close();

    const rate = (p: Phase) => p.calls / p.seconds;
    const ratio = rate(http) / rate(inProcess);
    const mb = (bytes: number | null) => (bytes === null ? 'unknown' : `${(bytes / 1024 / 1024).toFixed(1)} MB`);
    const sequentialMs = percentile(sequential.latenciesMs, 50);
    const costs = [httpTally.cost(), inProcessTally.cost()] as const;
    for (const cost of costs) recordSceneCost(cost);
    const pgCpuRatio = cpuPerOp(costs[0]) / cpuPerOp(costs[1]);
    const p99 = percentile(http.latenciesMs, 99);
    return [
      `PostgreSQL fresh database ${scratch.name}; built api (--api-only) and worker processes under plain node; ${CLIENTS} concurrent clients, each on its own run, one ${TOOL} per step (distinct call ids); ${MEASURE_MS / 1000} s measured per side in ${ROUNDS} alternating rounds, after ${WARMUP_MS / 1000} s of warm-up each; a sequential HTTP window in each round`,
      `through HTTP (api + worker): ${fmt(rate(http))} steps/s (${fmt(http.calls)} steps), latency p50 ${percentile(http.latenciesMs, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`,
      `in process (Runtime.submitStep): ${fmt(rate(inProcess))} steps/s (${fmt(inProcess.calls)} steps), latency p50 ${percentile(inProcess.latenciesMs, 50).toFixed(1)} ms, p99 ${percentile(inProcess.latenciesMs, 99).toFixed(1)} ms`,
      `sequential through HTTP (one client): ${fmt(rate(sequential))} steps/s (${fmt(sequential.calls)} steps), latency p50 ${sequentialMs.toFixed(1)} ms, p99 ${percentile(sequential.latenciesMs, 99).toFixed(1)} ms`,
      targetLine('http-vs-inprocess-16', ratio * 100),
      targetLine('http-p99-16', p99 / sequentialMs),
      `CPU per step through HTTP: api process ${cpuMs(http, 'api')}, worker process ${cpuMs(http, 'worker')}, PostgreSQL ${cpuMs(http, 'postgres')}, this process (the clients) ${cpuMs(http, 'self')}`,
      `CPU per step in process: this process (the pipeline) ${cpuMs(inProcess, 'self')}, PostgreSQL ${cpuMs(inProcess, 'postgres')}`,
      ...costs.flatMap(statementLines),
      Number.isNaN(pgCpuRatio)
        ? unmeasuredLine('pg-cpu-http-vs-inprocess', "PostgreSQL's /proc figures were unreadable")
        : targetLine('pg-cpu-http-vs-inprocess', pgCpuRatio),
      `api process RSS after the measured rounds: ${mb(apiRss)}; worker process after ${fmt(httpCalls)} calls in all (the rounds, then 8-call math.evaluate steps for ${fillSeconds.toFixed(1)} s): RSS ${mb(workerRss)}, peak ${mb(workerPeak)}`,
      workerRss === null
        ? unmeasuredLine('worker-rss-10k', "the worker's /proc status was unreadable")
        : targetLine('worker-rss-10k', workerRss / 1024 / 1024),
    ];
  } finally {
    await scene.close();
  }
}

/**
 * CLIENTS callers, each calling `call(caller, stepNumber)` in a loop, in windows: a caller's
 * step numbers continue from window to window (each run's steps are 1, 2, 3, …). A window lets
 * every call in flight finish; only calls that start and end inside a measured window count.
 */
export function side(
  call: (caller: number, stepNumber: number) => Promise<void>,
  clients = CLIENTS,
): {
  drive(ms: number, measured: boolean): Promise<void>;
  addCpu(spent: Record<CpuOwner, number | null>): void;
  phase(): Phase;
} {
  const next = Array.from({ length: clients }, () => 1);
  const latenciesMs: number[] = [];
  const cpu: Record<CpuOwner, number | null> = { api: 0, worker: 0, postgres: 0, self: 0 };
  let calls = 0;
  let seconds = 0;
  return {
    addCpu(spent) {
      for (const owner of Object.keys(cpu) as CpuOwner[]) {
        const value = spent[owner];
        cpu[owner] = value === null || cpu[owner] === null ? null : cpu[owner]! + value;
      }
    },
    async drive(ms: number, measured: boolean): Promise<void> {
      const start = performance.now();
      const end = start + ms;
      await Promise.all(
        Array.from({ length: clients }, async (_, caller) => {
          while (performance.now() < end) {
            const t0 = performance.now();
            await call(caller, next[caller]!++);
            const t1 = performance.now();
            if (measured && t1 <= end) {
              latenciesMs.push(t1 - t0);
              calls += 1;
            }
          }
        }),
      );
      if (measured) seconds += ms / 1000;
    },
    phase: () => ({ calls, seconds, latenciesMs, cpuMs: { ...cpu } }),
  };
}

/** CPU time so far (ms) of the api and worker processes, each postgres process, and this one. */
interface CpuSnapshot {
  readonly api: number | null;
  readonly worker: number | null;
  /** By pid (postgres-cpu.ts): the bench's own cluster's processes, or every `postgres*` on an external server. */
  readonly postgres: PostgresCpuSnapshot;
  readonly self: number;
}

async function cpuSnapshot(context: BenchContext, pids: { api: number | undefined; worker: number | undefined }): Promise<CpuSnapshot> {
  const ticksOf = async (pid: number | string): Promise<number | null> => {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
    if (stat === null) return null;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime, in clock ticks (100 per second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  };
  const postgres = await postgresCpuSnapshot(context);
  const self = process.cpuUsage();
  return {
    api: pids.api === undefined ? null : await ticksOf(pids.api),
    worker: pids.worker === undefined ? null : await ticksOf(pids.worker),
    postgres,
    self: (self.user + self.system) / 1000,
  };
}

function cpuSpent(before: CpuSnapshot, after: CpuSnapshot): Record<CpuOwner, number | null> {
  const minus = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
  const postgres = postgresCpuSpent(before.postgres, after.postgres);
  return { api: minus(before.api, after.api), worker: minus(before.worker, after.worker), postgres, self: after.self - before.self };
}

function cpuMs(phase: Phase, owner: CpuOwner): string {
  const total = phase.cpuMs[owner];
  return total === null || phase.calls === 0 ? 'unknown' : `${(total / phase.calls).toFixed(2)} ms`;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function rssOf(pid: number | undefined, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): Promise<number | null> {
  if (pid === undefined) return null;
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1];
  return kb === undefined ? null : Number(kb) * 1024;
}
