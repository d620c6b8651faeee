import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { percentile, side } from './api-throughput.bench';
import { skippedLine, type BenchContext } from './bench-context';
import { fmt } from './harness';
import { accountHops, hopLines, parseProbeDump, type ClientWindow, type ProbeEvent, type ProbeProcess } from './hop-account';
import { openRestatePeer, type RestatePeer, type RestatePeerFacts } from './restate-peer';
import { startSplitScene } from './split-scene';
import { targetLine, unmeasuredLine } from './targets';

/**
 * Issue 31, items 1 and 2 (docs/adr/0073): the path a client waits on, against Restate's. Ours:
 * the built api (`--api-only`) and worker processes on a fresh PostgreSQL database, started as the
 * HTTP suite starts them (`startSplitScene`, worker concurrency 16, poll 200 ms), one-call steps of
 * `demo.external_write` through `@veetbot/client` (`submitStepAndWait`), each on a run of its own
 * per client — the HTTP suite's scene and its `side` driver. Theirs: `restate-server` and a
 * service whose handler does one durable `ctx.run` (appending a line to an outbox, as
 * `demo.external_write` does), called through Restate's ingress over HTTP (`restate-peer.ts`).
 * Same machine, same run: ROUNDS alternating rounds (the order flips every round) of a
 * sequential window (one client) and a 16-client window per side, after a warm-up each.
 * Goals: http-step-vs-restate-seq (our sequential p50 / Restate's, ≤ 1.0×) and
 * http-vs-restate-16 (our throughput at 16 clients / Restate's, ≥ 1.0×). Item 3 (docs/adr/0076):
 * after the rounds, PROBE_STEPS sequential steps accounted hop by hop from a bench-only probe in
 * both processes (hop-probe-preload.mjs, hop-account.ts).
 */
const CLIENTS = 16;
const TOOL = 'demo.external_write';
const ROUNDS = 4;
const WINDOW_MS = Number(process.env.BENCH_RESTATE_WINDOW_MS ?? '3000');
const WARMUP_MS = Number(process.env.BENCH_RESTATE_WARMUP_MS ?? '2000');
const PROBE_STEPS = Number(process.env.BENCH_RESTATE_PROBE_STEPS ?? '200');
const PROBE = fileURLToPath(new URL('./hop-probe-preload.mjs', import.meta.url));
/** pg's entry as the bundles load it (an external import resolved from packages/store-postgres). */
const PG_MAIN = createRequire(new URL('../../../packages/store-postgres/package.json', import.meta.url)).resolve('pg');

export async function benchRestatePeer(context: BenchContext): Promise<string[]> {
  if (!context.postgres.reachable) return [skippedLine(context.postgres, 'HTTP steps vs Restate')];
  const opened = await openRestatePeer();
  if (!opened.ok) return [`Restate could not run here, so there is no peer figure: ${opened.reason}`];
  const { peer, facts } = opened;
  try {
    return await measure(peer, facts);
  } finally {
    await peer.close();
  }
}

async function measure(peer: RestatePeer, facts: RestatePeerFacts): Promise<string[]> {
  const probeDir = await mkdtemp(join(tmpdir(), 'veetbot-bench-hops-'));
  const probeFile = join(probeDir, 'probe');
  const scene = await startSplitScene({
    name: 'restate',
    workerEnv: { VEETBOT_WORKER_CONCURRENCY: String(CLIENTS), VEETBOT_WORKER_POLL_MS: '200' },
    // The per-hop account's probe (bench only, docs/adr/0076): statement, notification and request times.
    nodeArgs: ['--import', pathToFileURL(PROBE).href],
    env: { BENCH_HOP_PROBE_FILE: probeFile, BENCH_HOP_PROBE_PG: PG_MAIN },
  });
  const { scratch, api, worker, client } = scene;
  try {
    const session = await client.openSession({ agent_id: 'bench-restate', enabled_tools: [TOOL] });
    // CLIENTS runs for the concurrent side, one for the sequential side, one for the per-hop account.
    const runs = await Promise.all(
      Array.from({ length: CLIENTS + 2 }, () => client.createRun({ session_id: session.id, deadline_seconds: 3_600 })),
    );
    const ourStep = async (run: number, n: number) => {
      const outcome = await client.submitStepAndWait(runs[run]!.id, {
        step_number: n,
        calls: [{ call_id: `call_${run}_${n}`, tool_name: TOOL, arguments: { line: `effect ${run} ${n}` }, context_trust: ['user'] }],
        wait_seconds: 30,
      });
      if (outcome.status !== 'completed' || outcome.items[0]?.outcome.status !== 'succeeded')
        throw new Error(`HTTP step did not succeed: ${JSON.stringify(outcome).slice(0, 300)}`);
    };
    let restateCalls = 1; // the readiness call
    const theirCall = async (caller: number, n: number) => {
      restateCalls += 1;
      await peer.call(`effect ${caller} ${n}`);
    };
    const ours = { seq: side((_, n) => ourStep(CLIENTS, n), 1), conc: side(ourStep, CLIENTS) };
    const theirs = { seq: side((_, n) => theirCall(CLIENTS, n), 1), conc: side(theirCall, CLIENTS) };

    // CPU of each side's processes during its 16-client windows (on 2 cores, CPU is throughput).
    const ourPids = [api.child.pid, worker.child.pid];
    const theirPids = [peer.pids.server, peer.pids.service];
    const cpu = { ours: { own: 0, postgres: 0 }, theirs: { own: 0, postgres: 0 } };
    const measureCpu = async (who: 'ours' | 'theirs', window: () => Promise<void>) => {
      const pids = who === 'ours' ? ourPids : theirPids;
      const [own0, pg0] = [await cpuMsOf(pids), await postgresCpuMs()];
      await window();
      const [own1, pg1] = [await cpuMsOf(pids), await postgresCpuMs()];
      cpu[who].own += own1 - own0;
      cpu[who].postgres += cpuDelta(pg0, pg1);
    };
    for (const s of [ours.conc, theirs.conc, ours.seq, theirs.seq]) await s.drive(WARMUP_MS, false);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (['ours', 'theirs'] as const) : (['theirs', 'ours'] as const);
      const sides = { ours, theirs };
      for (const who of order) await sides[who].seq.drive(WINDOW_MS, true);
      for (const who of order) await measureCpu(who, () => sides[who].conc.drive(WINDOW_MS, true));
    }

    // The per-hop account: PROBE_STEPS more sequential steps on a run of their own, after the rounds.
    const windows: ClientWindow[] = [];
    for (let n = 1; n <= PROBE_STEPS; n++) {
      const sent = process.hrtime.bigint();
      await ourStep(CLIENTS + 1, n);
      windows.push({ sent, answered: process.hrtime.bigint() });
    }
    const hops = await readHopAccount(probeFile, { api: api.child.pid, worker: worker.child.pid }, windows);

    const [oursSeq, theirsSeq, oursConc, theirsConc] = [ours.seq.phase(), theirs.seq.phase(), ours.conc.phase(), theirs.conc.phase()];
    const rate = (p: { calls: number; seconds: number }) => p.calls / p.seconds;
    const p50 = (p: { latenciesMs: number[] }) => percentile(p.latenciesMs, 50);
    const p99 = (p: { latenciesMs: number[] }) => percentile(p.latenciesMs, 99);
    const describe = (p: { calls: number; seconds: number; latenciesMs: number[] }, unit: string) =>
      `${fmt(rate(p))} ${unit}/s (${fmt(p.calls)}), latency p50 ${p50(p).toFixed(1)} ms, p99 ${p99(p).toFixed(1)} ms`;
    const written = await peer.outboxLines();
    const ourSettings = await postgresDurability(scratch.url);
    const ourBytes = await databaseBytes(scratch.url);
    const theirBytes = await peer.dataBytes();
    const seqRatio = p50(oursSeq) / p50(theirsSeq);
    const concRatio = rate(oursConc) / rate(theirsConc);
    return [
      `peer: @restatedev/restate-server ${facts.serverVersion} (the binary of @restatedev/restate-server-linux-x64, one node, a temporary data folder, free ports) and a @restatedev/restate-sdk ${facts.sdkVersion} service in a process of its own (HTTP/2 endpoint, registered through the admin API) whose handler does one ctx.run appending a line to an outbox; called through the ingress (POST /bench/step, waiting for the result)`,
      `ours: built api (--api-only) and worker processes under plain node on the fresh PostgreSQL database ${scratch.name}; one-call steps of ${TOOL} (appending a line to an outbox) through POST /v1/runs/{id}/steps, waiting for the outcome, each client on its own run`,
      `same machine, same run: ${ROUNDS} alternating rounds of a sequential window and a ${CLIENTS}-client window per side, ${WINDOW_MS / 1000} s each, after ${WARMUP_MS / 1000} s of warm-up each`,
      `what the peer persists: ${facts.persistence}`,
      `what we persist: each step's rows (step, invocation intent, claim, watermark, result, step completion) in PostgreSQL through its WAL, every commit flushed before the answer (fsync = ${ourSettings.fsync}, synchronous_commit = ${ourSettings.synchronous_commit}, wal_sync_method = ${ourSettings.wal_sync_method}, full_page_writes = ${ourSettings.full_page_writes})`,
      `on disk after the run: Restate's data folder ${(theirBytes / 1024 / 1024).toFixed(1)} MB; our database ${(ourBytes / 1024 / 1024).toFixed(1)} MB (of a cluster whose WAL is shared with other databases)`,
      `sequential, ours through HTTP: ${describe(oursSeq, 'steps')}`,
      `sequential, Restate: ${describe(theirsSeq, 'calls')}`,
      `${CLIENTS} clients, ours through HTTP: ${describe(oursConc, 'steps')}`,
      `${CLIENTS} callers, Restate: ${describe(theirsConc, 'calls')}`,
      `CPU per call at ${CLIENTS} clients: ours the api and worker processes ${(cpu.ours.own / oursConc.calls).toFixed(2)} ms, PostgreSQL ${(cpu.ours.postgres / oursConc.calls).toFixed(2)} ms (all its processes: anything else using the server counts too); Restate's server and service processes ${(cpu.theirs.own / theirsConc.calls).toFixed(2)} ms (PostgreSQL meanwhile, idle for it: ${(cpu.theirs.postgres / theirsConc.calls).toFixed(2)} ms)`,
      `Restate's step ran once per call: ${fmt(written)} outbox lines for ${fmt(restateCalls)} calls${written === restateCalls ? '' : ' (MISMATCH)'}`,
      ...hops,
      Number.isFinite(seqRatio)
        ? targetLine('http-step-vs-restate-seq', seqRatio)
        : unmeasuredLine('http-step-vs-restate-seq', 'no sequential calls were measured'),
      Number.isFinite(concRatio)
        ? targetLine('http-vs-restate-16', concRatio)
        : unmeasuredLine('http-vs-restate-16', 'no concurrent calls were measured'),
    ];
  } finally {
    await scene.close();
    await rm(probeDir, { recursive: true, force: true });
  }
}

/** Asks both processes' probes for their rings (SIGUSR2) and accounts the windows' hops. */
async function readHopAccount(
  probeFile: string,
  pids: Record<ProbeProcess, number | undefined>,
  windows: readonly ClientWindow[],
): Promise<string[]> {
  const events: ProbeEvent[] = [];
  for (const who of ['api', 'worker'] as const) {
    const pid = pids[who];
    if (pid === undefined) return [`per hop: not measured (the ${who} process has no pid)`];
    process.kill(pid, 'SIGUSR2');
    let text: string | null = null;
    for (let tries = 0; text === null && tries < 100; tries++) {
      text = await readFile(`${probeFile}.${pid}`, 'utf8').catch(() => null);
      if (text === null) await new Promise((r) => setTimeout(r, 50));
    }
    if (text === null) return [`per hop: not measured (the ${who} process wrote no probe file)`];
    events.push(...parseProbeDump(text, who));
  }
  return hopLines(accountHops(events, windows));
}

async function postgresDurability(
  url: string,
): Promise<Record<'fsync' | 'synchronous_commit' | 'wal_sync_method' | 'full_page_writes', string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const show = async (name: string) => (await client.query<Record<string, string>>(`show ${name}`)).rows[0]?.[name] ?? 'unknown';
    return {
      fsync: await show('fsync'),
      synchronous_commit: await show('synchronous_commit'),
      wal_sync_method: await show('wal_sync_method'),
      full_page_writes: await show('full_page_writes'),
    };
  } finally {
    await client.end();
  }
}

async function databaseBytes(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query<{ size: string }>('select pg_database_size(current_database())::text as size');
    return Number(result.rows[0]?.size ?? '0');
  } finally {
    await client.end();
  }
}

/** CPU time (ms, user + system) the given processes have used so far, from /proc (0 where unreadable). */
async function cpuMsOf(pids: ReadonlyArray<number | undefined>): Promise<number> {
  let total = 0;
  for (const pid of pids) if (pid !== undefined) total += (await ticksOf(String(pid))) ?? 0;
  return total;
}

/** Each postgres process's CPU time so far (ms), by pid: backends come and go with the pools. */
async function postgresCpuMs(): Promise<Map<string, number>> {
  const byPid = new Map<string, number>();
  for (const entry of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(entry)) continue;
    const comm = await readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '');
    if (!comm.startsWith('postgres')) continue;
    const ms = await ticksOf(entry);
    if (ms !== null) byPid.set(entry, ms);
  }
  return byPid;
}

function cpuDelta(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): number {
  let total = 0;
  // A backend that started inside the window counts from zero.
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

async function ticksOf(pid: string): Promise<number | null> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (text === null) return null;
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // utime and stime, in clock ticks (100 per second on Linux).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}
