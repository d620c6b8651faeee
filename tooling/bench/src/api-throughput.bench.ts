import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { VeetbotClient } from '@veetbot/client';
import { migrate, openDatabase } from '@veetbot/store-postgres';
import { skippedLine, type BenchContext } from './bench-context';
import { composeRuntime, openRuntimeTenant } from './runtime-scene';
import { fmt } from './harness';
import { scratchDatabase, serverUrl } from './postgres-server';

/**
 * Issue 5, Performance: governed calls per second through the HTTP API (the real api process
 * `--api-only` and a real worker process, 16 concurrent clients, each on its own run, one
 * `math.evaluate` call per step with a distinct call id and expression) against the same calls
 * made in process on the pipeline (`Runtime.submitStep`, 16 concurrent callers) on the same
 * fresh PostgreSQL database, in alternating rounds (each side's warm-up first). Prints both
 * rates, their ratio (target: the API keeps ≥ 60%), p50/p99 latency of each, and the RSS of the
 * api and worker processes after the rounds.
 */
const CLIENTS = 16;
const WARMUP_MS = Number(process.env.BENCH_API_WARMUP_MS ?? '3000');
const MEASURE_MS = Number(process.env.BENCH_API_MEASURE_MS ?? '15000');
/** The measured time is split into this many rounds per side, alternated (HTTP first, then in process first, …). */
const ROUNDS = 4;
const TARGET_RATIO = 0.6;
const REPO = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

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
  const scratch = await scratchDatabase(serverUrl(), 'veetbot_bench_api');
  const dataDir = await mkdtemp(join(tmpdir(), 'veetbot-bench-api-'));
  const children: ChildProcess[] = [];
  try {
    const operatorConfig = join(dataDir, 'operator.json');
    await writeFile(operatorConfig, JSON.stringify({ mcp: { servers: [] } }));
    const port = await freePort();
    const key = `vbk_bench_${randomBytes(16).toString('base64url')}`;
    const base = { DATABASE_URL: scratch.url, VEETBOT_DATA_DIR: dataDir };
    const api = startNode(join(REPO, 'apps/api/src/main.ts'), ['--api-only'], {
      ...base,
      VEETBOT_PORT: String(port),
      VEETBOT_DEMO_API_KEY: key,
      VEETBOT_OPERATOR_CONFIG: operatorConfig,
    });
    children.push(api.child);
    await api.waitFor(/veetbot listening on /);
    const worker = startNode(join(REPO, 'apps/worker/src/main.ts'), [], {
      ...base,
      VEETBOT_WORKER_CONCURRENCY: String(CLIENTS),
      VEETBOT_WORKER_POLL_MS: '200',
      VEETBOT_WORKER_PORT: '0',
    });
    children.push(worker.child);
    await worker.waitFor(/ started: /);

    // Through HTTP: one session, a run per client, steps submitted one after another per run.
    const client = new VeetbotClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: key });
    const session = await client.openSession({ agent_id: 'bench-api', enabled_tools: ['math.evaluate'] });
    const httpRuns = await Promise.all(
      Array.from({ length: CLIENTS }, () => client.createRun({ session_id: session.id, deadline_seconds: 3_600 })),
    );
    const httpSide = side(async (caller, n) => {
      const outcome = await client.submitStepAndWait(httpRuns[caller]!.id, {
        step_number: n,
        calls: [
          {
            call_id: `call_${caller}_${n}`,
            tool_name: 'math.evaluate',
            arguments: { expression: `${n} + ${caller}` },
            context_trust: ['user'],
          },
        ],
        wait_seconds: 30,
      });
      if (outcome.status !== 'completed' || outcome.items[0]?.outcome.status !== 'succeeded')
        throw new Error(`HTTP call did not succeed: ${JSON.stringify(outcome).slice(0, 300)}`);
    });

    // In process: the same calls on the pipeline (Runtime.submitStep), same database, while the
    // api and worker processes stay up (idle but for the worker's poll) so the two sides are
    // measured in alternating rounds and load on the machine hits both alike.
    const database = await openDatabase({ url: scratch.url, poolSize: 10 });
    let http: Phase;
    let inProcess: Phase;
    let apiRss: number | null;
    let workerRss: number | null;
    try {
      await migrate(database);
      const runtime = composeRuntime(database, dataDir);
      const {
        tenantId,
        principal,
        runIds: runs,
      } = await openRuntimeTenant(runtime, database, {
        name: 'API bench, in process',
        agentId: 'bench-inprocess',
        scopes: ['workspace.read'],
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
              toolName: 'math.evaluate',
              arguments: { expression: `${n} + ${caller}` },
              contextTrust: ['user'],
            },
          ],
        });
        if (outcome.items[0]?.outcome.status !== 'succeeded')
          throw new Error(`in-process call did not succeed: ${JSON.stringify(outcome).slice(0, 300)}`);
      });
      await httpSide.drive(WARMUP_MS, false);
      await inProcessSide.drive(WARMUP_MS, false);
      const window = MEASURE_MS / ROUNDS;
      const processes = { api: api.child.pid, worker: worker.child.pid };
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? [httpSide, inProcessSide] : [inProcessSide, httpSide];
        for (const s of order) {
          const before = await cpuSnapshot(processes);
          await s.drive(window, true);
          s.addCpu(cpuSpent(before, await cpuSnapshot(processes)));
        }
      }
      http = httpSide.phase();
      inProcess = inProcessSide.phase();
      apiRss = await rssOf(api.child.pid);
      workerRss = await rssOf(worker.child.pid);
    } finally {
      await database.close();
    }
    for (const child of [api.child, worker.child]) child.kill('SIGTERM');
    await Promise.all([api.exited, worker.exited]);

    const rate = (p: Phase) => p.calls / p.seconds;
    const ratio = rate(http) / rate(inProcess);
    const mb = (bytes: number | null) => (bytes === null ? 'unknown' : `${(bytes / 1024 / 1024).toFixed(1)} MB`);
    return [
      `PostgreSQL fresh database ${scratch.name}; ${CLIENTS} concurrent clients, each on its own run, one math.evaluate per step (distinct call ids); ${MEASURE_MS / 1000} s measured per side in ${ROUNDS} alternating rounds, after ${WARMUP_MS / 1000} s of warm-up each`,
      `through HTTP (api process --api-only + worker process): ${fmt(rate(http))} calls/s (${fmt(http.calls)} calls), latency p50 ${percentile(http.latenciesMs, 50).toFixed(1)} ms, p99 ${percentile(http.latenciesMs, 99).toFixed(1)} ms`,
      `in process (Runtime.submitStep): ${fmt(rate(inProcess))} calls/s (${fmt(inProcess.calls)} calls), latency p50 ${percentile(inProcess.latenciesMs, 50).toFixed(1)} ms, p99 ${percentile(inProcess.latenciesMs, 99).toFixed(1)} ms`,
      `API / in-process throughput: ${(ratio * 100).toFixed(0)}% (target ≥ ${TARGET_RATIO * 100}%: ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'})`,
      `CPU per call through HTTP: api process ${cpuMs(http, 'api')}, worker process ${cpuMs(http, 'worker')}, PostgreSQL ${cpuMs(http, 'postgres')}, this process (the clients) ${cpuMs(http, 'self')}`,
      `CPU per call in process: this process (the pipeline) ${cpuMs(inProcess, 'self')}, PostgreSQL ${cpuMs(inProcess, 'postgres')}`,
      `RSS after the measured rounds: api process ${mb(apiRss)}, worker process ${mb(workerRss)}`,
    ];
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await scratch.drop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * CLIENTS callers, each calling `call(caller, stepNumber)` in a loop, in windows: a caller's
 * step numbers continue from window to window (each run's steps are 1, 2, 3, …). A window lets
 * every call in flight finish; only calls that start and end inside a measured window count.
 */
function side(call: (caller: number, stepNumber: number) => Promise<void>): {
  drive(ms: number, measured: boolean): Promise<void>;
  addCpu(spent: Record<CpuOwner, number | null>): void;
  phase(): Phase;
} {
  const next = Array.from({ length: CLIENTS }, () => 1);
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
        Array.from({ length: CLIENTS }, async (_, caller) => {
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
  /** By pid: backends come and go with pooled connections, so only pids in both snapshots count. */
  readonly postgres: ReadonlyMap<string, number> | null;
  readonly self: number;
}

async function cpuSnapshot(pids: { api: number | undefined; worker: number | undefined }): Promise<CpuSnapshot> {
  const ticksOf = async (pid: number | string): Promise<number | null> => {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
    if (stat === null) return null;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime, in clock ticks (100 per second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  };
  let postgres: Map<string, number> | null = new Map();
  try {
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const comm = await readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '');
      if (!comm.startsWith('postgres')) continue;
      const ticks = await ticksOf(entry);
      if (ticks !== null) postgres.set(entry, ticks);
    }
  } catch {
    postgres = null;
  }
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
  let postgres: number | null = null;
  if (before.postgres !== null && after.postgres !== null) {
    postgres = 0;
    for (const [pid, ticks] of after.postgres) {
      const earlier = before.postgres.get(pid);
      // A backend that started inside the window counts from zero.
      postgres += ticks - (earlier ?? 0);
    }
  }
  return { api: minus(before.api, after.api), worker: minus(before.worker, after.worker), postgres, self: after.self - before.self };
}

function cpuMs(phase: Phase, owner: CpuOwner): string {
  const total = phase.cpuMs[owner];
  return total === null || phase.calls === 0 ? 'unknown' : `${(total / phase.calls).toFixed(2)} ms`;
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function rssOf(pid: number | undefined): Promise<number | null> {
  if (pid === undefined) return null;
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  return kb === undefined ? null : Number(kb) * 1024;
}

function startNode(main: string, args: string[], env: Record<string, string>) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && !k.startsWith('VEETBOT_')));
  // Not through tsx's CLI: the pid is the node process itself, so its RSS is the process's.
  const child = spawn(process.execPath, ['--import', 'tsx', main, ...args], {
    cwd: REPO,
    env: { ...clean, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (text += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (text += d));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return {
    child,
    exited,
    async waitFor(pattern: RegExp, timeoutMs = 90_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(text)) {
        if (child.exitCode !== null) throw new Error(`${main} exited ${child.exitCode}: ${text.trim().split('\n').slice(-3).join(' | ')}`);
        if (Date.now() > deadline) throw new Error(`${main} did not start within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => done(port));
    });
  });
}
