import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { VeetbotClient, type StepOutcome } from '@veetbot/client';
import { openDatabase } from '@veetbot/store-postgres';
import { startScene, type E2eScene, type Started } from './e2e-processes';

/**
 * The randomized kill soak (issue 25 item 5, docs/adr/0067): the split deployment — the api and
 * `workers` worker processes from the production bundles on one PostgreSQL database — under a
 * load of concurrent runs whose steps call `demo.external_write` (an effect the soak counts
 * exactly: the outbox record carries the call's idempotency key) beside `math.evaluate` (no
 * effect: only its outcome is checked). Workers, and a share of the time the api, are SIGKILLed
 * at random moments and started again; then the load stops, everything drains, and the audit
 * reads the outcomes over HTTP and the rows and the outbox directly.
 *
 * The CI batch (test/kill-soak.test.ts) and the long form (`pnpm soak`, src/kill-soak-main.ts)
 * both run this.
 */
export interface SoakOptions {
  /** SIGKILLs in total (workers and api). */
  readonly kills: number;
  /** Worker processes kept running (each killed one is replaced at once). */
  readonly workers: number;
  /** Concurrent runs (each a loop: a step, wait for it, the next). */
  readonly lanes: number;
  /** demo.external_write calls per step (one math.evaluate rides along). */
  readonly writesPerStep: number;
  /** Steps per run before the lane opens a new run. */
  readonly stepsPerRun: number;
  /** The share of kills that hit the api instead of a worker. */
  readonly apiKillShare: number;
  /** The pause before each kill is drawn uniformly from this range. */
  readonly killIntervalMs: readonly [number, number];
  /** The run lease's TTL: how soon a dead worker's run is taken over. */
  readonly leaseTtlMs: number;
  /** After the kills: how long the load and the reconcilers may take to settle. */
  readonly drainTimeoutMs: number;
  /** The PostgreSQL server the fresh database is made on (default DATABASE_URL). */
  readonly serverUrl?: string;
  readonly seed?: number;
  readonly log?: (line: string) => void;
}

export const CI_SOAK: SoakOptions = {
  kills: 30,
  workers: 2,
  lanes: 6,
  writesPerStep: 6,
  stepsPerRun: 25,
  apiKillShare: 0.1,
  killIntervalMs: [300, 1_500],
  leaseTtlMs: 2_000,
  drainTimeoutMs: 90_000,
};

export interface SoakAudit {
  readonly kills: { readonly workers: number; readonly api: number };
  readonly runs: number;
  readonly steps: number;
  /** Every call submitted (writes and reads). */
  readonly calls: number;
  readonly writes: number;
  readonly outcomes: Readonly<Record<string, number>>;
  /** An effect recorded more than once (the same key twice in the outbox). */
  readonly duplicates: number;
  /** A submitted call without a terminal outcome, or `succeeded` without its effect. */
  readonly lost: number;
  /** Steps not completed, and invocation rows not terminal, after the drain. */
  readonly stuck: number;
  readonly uncertain: number;
  /** UNCERTAIN calls a reconciler settled (applied / not applied). */
  readonly settledApplied: number;
  readonly settledNotApplied: number;
  /** UNCERTAIN calls with no review after the drain: a person's work. */
  readonly leftForPerson: number;
  /** Every broken promise, one line each (empty when the soak passed). */
  readonly problems: readonly string[];
  readonly durationMs: number;
}

export interface SubmittedCall {
  readonly runId: string;
  readonly step: number;
  readonly callId: string;
  readonly tool: 'demo.external_write' | 'math.evaluate';
  readonly line: string | null;
}

/** How long a worker is up before it may be a victim. */
const WARM_MS = 1_500;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A small deterministic generator (mulberry32), so a seed reproduces the kill schedule. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A fetch that outlives the api's death: a refused or reset connection, and a retryable 503,
 * are tried again. Every request the soak repeats is safe to repeat: a step is idempotent on its
 * number (the same batch), a GET is a GET, and a session or a run opened twice is an unused row.
 */
function survivingFetch(stopAt: () => number): typeof fetch {
  return async (input, init) => {
    for (;;) {
      try {
        const response = await fetch(input, { ...init, signal: AbortSignal.timeout(30_000) });
        if (response.status !== 503 || Date.now() > stopAt()) return response;
        await response.body?.cancel();
      } catch (error) {
        if (Date.now() > stopAt()) throw error;
      }
      await sleep(200);
    }
  };
}

export async function runKillSoak(options: SoakOptions): Promise<SoakAudit> {
  const log = options.log ?? (() => undefined);
  const rand = random(options.seed ?? Date.now());
  const began = Date.now();
  const scene = await startScene({
    workers: 0,
    built: true,
    ...(options.serverUrl === undefined ? {} : { serverUrl: options.serverUrl }),
    workerEnv: {
      VEETBOT_LEASE_TTL_MS: String(options.leaseTtlMs),
      VEETBOT_WORKER_SWEEP_MS: '500',
      VEETBOT_WORKER_POLL_MS: '200',
    },
  });
  try {
    return await soak(scene, options, rand, log, began);
  } finally {
    await scene.close();
  }
}

/** What the load submitted and what came back. */
export interface Load {
  readonly submitted: readonly SubmittedCall[];
  readonly outcomes: ReadonlyMap<string, StepOutcome>;
  readonly runs: () => number;
  /** Stop opening steps; resolves once every lane has its last step completed (or gave up at `drainTimeoutMs`). */
  stop(drainTimeoutMs: number): Promise<void>;
}

export interface LoadShape {
  readonly lanes: number;
  readonly writesPerStep: number;
  readonly stepsPerRun: number;
}

/**
 * `lanes` concurrent runs against the api at `baseUrl`: each submits a step of `writesPerStep`
 * demo.external_write calls (each line unique) and one math.evaluate, waits for it, and submits
 * the next; a new run every `stepsPerRun` steps. Requests survive the api's death and its 503s.
 */
export function startLoad(scene: Pick<E2eScene, 'baseUrl' | 'demoKey'>, shape: LoadShape): Load {
  // Requests give up only after the drain's time: a request that never succeeds is reported as
  // what it left behind, not as a hang.
  let giveUpAt = Number.POSITIVE_INFINITY;
  const client = new VeetbotClient({ baseUrl: scene.baseUrl, apiKey: scene.demoKey, fetch: survivingFetch(() => giveUpAt) });
  const submitted: SubmittedCall[] = [];
  const outcomes = new Map<string, StepOutcome>();
  let stopLoad = false;
  let runs = 0;
  const tag = Math.random().toString(36).slice(2, 8);

  const lane = async (laneIndex: number) => {
    const session = await client.openSession({ agent_id: `soak-${laneIndex}`, enabled_tools: ['demo.external_write', 'math.evaluate'] });
    for (let runIndex = 0; !stopLoad; runIndex++) {
      const run = await client.createRun({ session_id: session.id, deadline_seconds: 3_600 });
      runs++;
      for (let step = 1; step <= shape.stepsPerRun && !stopLoad; step++) {
        const calls: SubmittedCall[] = [];
        for (let i = 0; i < shape.writesPerStep; i++) {
          const line = `soak ${tag}.${laneIndex}.${runIndex}.${step}.${i}`;
          calls.push({ runId: run.id, step, callId: `w${i}`, tool: 'demo.external_write', line });
        }
        calls.push({ runId: run.id, step, callId: 'r', tool: 'math.evaluate', line: null });
        submitted.push(...calls);
        await client.submitStep(run.id, {
          step_number: step,
          wait_seconds: 0,
          calls: calls.map((c) => ({
            call_id: c.callId,
            tool_name: c.tool,
            arguments: c.tool === 'math.evaluate' ? { expression: `${laneIndex} + ${step}` } : { line: c.line },
            context_trust: ['user' as const],
          })),
        });
        for (;;) {
          const outcome = await client.getStep(run.id, step);
          if (outcome.status === 'completed') {
            outcomes.set(`${run.id}/${step}`, outcome);
            break;
          }
          if (Date.now() > giveUpAt) break;
          await sleep(150);
        }
      }
    }
  };
  const lanes = Array.from({ length: shape.lanes }, (_, i) => lane(i));
  return {
    submitted,
    outcomes,
    runs: () => runs,
    async stop(drainTimeoutMs) {
      stopLoad = true;
      giveUpAt = Date.now() + drainTimeoutMs;
      await Promise.all(lanes);
    },
  };
}

async function soak(scene: E2eScene, options: SoakOptions, rand: () => number, log: (line: string) => void, began: number) {
  const live: Started[] = [];
  const upSince = new Map<Started, number>();
  const up = (worker: Started) => {
    live.push(worker);
    upSince.set(worker, Date.now());
  };
  for (let i = 0; i < options.workers; i++) up(await scene.startWorker());
  const load = startLoad(scene, options);
  const problems: string[] = [];

  // The kills. An api kill restarts it on the same port; a worker kill starts a replacement in
  // the background (the next victim is drawn from the workers that are up, so kills come as fast
  // as the schedule says, not as fast as a process starts).
  const kills = { workers: 0, api: 0 };
  const starting = new Set<Promise<void>>();
  for (let k = 0; k < options.kills; k++) {
    const [low, high] = options.killIntervalMs;
    await sleep(low + Math.floor(rand() * (high - low)));
    if (rand() < options.apiKillShare) {
      const api = scene.api;
      api.child.kill('SIGKILL');
      await api.exited;
      kills.api++;
      await scene.restartApi();
    } else {
      // The victim has been up long enough to have claimed work (a worker killed as it starts
      // tests nothing): about one kill in five then lands inside a call.
      while (live.length === 0) await Promise.race(starting);
      const warm = () => live.filter((w) => Date.now() - (upSince.get(w) ?? 0) >= WARM_MS);
      while (warm().length === 0) await sleep(100);
      const candidates = warm();
      const victim = candidates[Math.floor(rand() * candidates.length)]!;
      live.splice(live.indexOf(victim), 1);
      victim.child.kill('SIGKILL');
      const exit = await victim.exited;
      if (exit.signal !== 'SIGKILL') problems.push(`worker ${victim.child.pid} had exited by itself: ${JSON.stringify(exit)}`);
      kills.workers++;
      const replacement: Promise<void> = scene.startWorker().then((worker) => {
        up(worker);
        starting.delete(replacement);
      });
      starting.add(replacement);
    }
    if ((k + 1) % 10 === 0) log(`kills ${k + 1}/${options.kills} (api ${kills.api}); calls so far ${load.submitted.length}`);
  }
  await Promise.all(starting);

  // Drain: the lanes finish the step they are in, the takeovers and the sweeps finish theirs.
  const drainStarted = Date.now();
  await load.stop(options.drainTimeoutMs);
  log(`load stopped after ${load.runs()} runs, ${load.submitted.length} calls; waiting for the reconcilers`);
  return auditDeployment(scene, load, {
    kills,
    problems,
    began,
    settleUntil: drainStarted + options.drainTimeoutMs,
  });
}

/**
 * The audit of a deployment after its load stopped: waits (until `settleUntil`) for the
 * reconcilers to be done with every UNCERTAIN call, then reads every invocation row and the
 * outbox and checks each submitted call against both.
 */
export async function auditDeployment(
  scene: Pick<E2eScene, 'url' | 'dataDir'>,
  load: Load,
  context: { kills: { workers: number; api: number }; problems: string[]; began: number; settleUntil: number },
): Promise<SoakAudit> {
  const database = await openDatabase({ url: scene.url, poolSize: 2 });
  try {
    if (database.native.driver !== 'postgres') throw new Error('the soak runs on PostgreSQL');
    const pool = database.native.pool;
    const readRows = async () => (await pool.query<InvocationRow>(INVOCATIONS_SQL)).rows;
    // The reconcilers are done when every UNCERTAIN row with a watermark has a review or no
    // further attempt scheduled (its reconciler's `unknown`, or its attempts spent).
    let rows = await readRows();
    while (
      Date.now() < context.settleUntil &&
      rows.some((r) => r.status === 'uncertain' && r.watermark && r.resolution === null && r.next_attempt_pending)
    ) {
      await sleep(500);
      rows = await readRows();
    }
    const outbox = await readOutbox(join(scene.dataDir, 'outbox.log'));
    return audit({
      kills: context.kills,
      runs: load.runs(),
      submitted: load.submitted,
      outcomes: load.outcomes,
      rows,
      outbox,
      problems: context.problems,
      began: context.began,
    });
  } finally {
    await database.close();
  }
}

interface InvocationRow {
  readonly id: string;
  readonly run_id: string;
  readonly step_number: number;
  readonly call_id: string;
  readonly tool_name: string;
  readonly status: string;
  readonly idempotency_key: string;
  readonly watermark: boolean;
  readonly resolution: string | null;
  readonly reviewed_by: string | null;
  readonly last_outcome: string | null;
  readonly next_attempt_pending: boolean;
}

const INVOCATIONS_SQL = `
  select i.id, i.run_id, i.step_number, i.call_id, i.tool_name, i.status, i.idempotency_key,
         i.effect_sent_at is not null as watermark,
         r.resolution, r.reviewed_by, c.last_outcome,
         (c.invocation_id is null or c.next_attempt_at is not null) as next_attempt_pending
    from tool_invocations i
    left join invocation_reviews r on r.invocation_id = i.id
    left join invocation_reconciliations c on c.invocation_id = i.id`;

interface OutboxRecord {
  readonly key: string;
  readonly line: string;
}

async function readOutbox(path: string): Promise<OutboxRecord[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const tab = l.indexOf('\t');
      return { key: l.slice(0, tab), line: l.slice(tab + 1) };
    });
}

const TERMINAL = new Set(['succeeded', 'failed', 'denied', 'uncertain']);

function audit(input: {
  kills: { workers: number; api: number };
  runs: number;
  submitted: readonly SubmittedCall[];
  outcomes: ReadonlyMap<string, StepOutcome>;
  rows: readonly InvocationRow[];
  outbox: readonly OutboxRecord[];
  problems: string[];
  began: number;
}): SoakAudit {
  const { submitted, outcomes, rows, outbox, problems } = input;
  const effectsByKey = new Map<string, number>();
  for (const record of outbox) effectsByKey.set(record.key, (effectsByKey.get(record.key) ?? 0) + 1);
  const effectsByLine = new Map<string, number>();
  for (const record of outbox) effectsByLine.set(record.line, (effectsByLine.get(record.line) ?? 0) + 1);
  const rowsByCall = new Map<string, InvocationRow[]>();
  for (const row of rows) {
    const id = `${row.run_id}/${row.step_number}/${row.call_id}`;
    rowsByCall.set(id, [...(rowsByCall.get(id) ?? []), row]);
  }

  // Every call's line is unique, so a line twice is an effect twice, whatever key it came with.
  let duplicates = 0;
  for (const [key, n] of effectsByKey) if (n > 1) problems.push(`duplicate: key ${key.slice(0, 12)}… in the outbox ${n} times`);
  for (const [line, n] of effectsByLine)
    if (n > 1) {
      duplicates += n - 1;
      problems.push(`duplicate: line "${line}" in the outbox ${n} times`);
    }
  const knownKeys = new Set(rows.map((r) => r.idempotency_key));
  for (const record of outbox)
    if (!knownKeys.has(record.key)) problems.push(`an outbox record no invocation row accounts for: "${record.line}"`);

  let lost = 0;
  let stuck = 0;
  const outcomeCounts: Record<string, number> = {};
  const steps = new Set(submitted.map((c) => `${c.runId}/${c.step}`));
  for (const step of steps)
    if (!outcomes.has(step)) {
      stuck++;
      problems.push(`stuck: step ${step} not completed after the drain`);
    }
  for (const row of rows)
    if (!TERMINAL.has(row.status)) {
      stuck++;
      problems.push(`stuck: invocation ${row.id} (${row.tool_name}) still ${row.status}`);
    }

  let uncertain = 0;
  let settledApplied = 0;
  let settledNotApplied = 0;
  let leftForPerson = 0;
  for (const call of submitted) {
    const step = outcomes.get(`${call.runId}/${call.step}`);
    if (step === undefined) continue; // counted stuck
    const item = step.items.find((i) => i.call_id === call.callId);
    if (item === undefined) {
      lost++;
      problems.push(`lost: ${call.runId}/${call.step}/${call.callId} has no outcome in its completed step`);
      continue;
    }
    const status = item.outcome.status;
    outcomeCounts[status] = (outcomeCounts[status] ?? 0) + 1;
    if (!TERMINAL.has(status)) {
      lost++;
      problems.push(`lost: ${call.callId} of ${call.runId}/${call.step} is ${status} in a completed step`);
      continue;
    }
    const found = rowsByCall.get(`${call.runId}/${call.step}/${call.callId}`) ?? [];
    if (found.length !== 1) {
      problems.push(`${call.runId}/${call.step}/${call.callId} has ${found.length} invocation rows`);
      if (found.length === 0) continue;
    }
    const row = found[0]!;
    if (row.status !== status) problems.push(`${row.id}: the step says ${status}, the row says ${row.status}`);
    if (call.tool !== 'demo.external_write') continue;
    const effects = effectsByKey.get(row.idempotency_key) ?? 0;
    if (status === 'succeeded' && effects === 0) {
      lost++;
      problems.push(`lost: ${row.id} succeeded but its effect is not in the outbox`);
    }
    if ((status === 'failed' || status === 'denied') && effects > 0) problems.push(`${row.id} is ${status} but its effect happened`);
    if (status !== 'uncertain') continue;
    uncertain++;
    if (row.resolution === null) {
      leftForPerson++;
      continue;
    }
    if (row.reviewed_by?.startsWith('reconciler:') !== true) {
      problems.push(`${row.id} was reviewed by ${row.reviewed_by}, not a reconciler (nobody else reviews in the soak)`);
      continue;
    }
    // A reconciler's definite answer must be the truth the outbox shows (docs/adr/0063).
    if (row.resolution === 'succeeded') {
      settledApplied++;
      if (effects !== 1) problems.push(`${row.id} settled applied, but the outbox holds ${effects} records of it`);
    } else if (row.resolution === 'not_applied') {
      settledNotApplied++;
      if (effects !== 0) problems.push(`${row.id} settled not applied, but its effect is in the outbox`);
    } else problems.push(`${row.id} settled ${row.resolution} by a reconciler`);
  }
  return {
    kills: input.kills,
    runs: input.runs,
    steps: steps.size,
    calls: submitted.length,
    writes: submitted.filter((c) => c.tool === 'demo.external_write').length,
    outcomes: outcomeCounts,
    duplicates,
    lost,
    stuck,
    uncertain,
    settledApplied,
    settledNotApplied,
    leftForPerson,
    problems,
    durationMs: Date.now() - input.began,
  };
}

/** The audit as the lines `pnpm soak` prints. */
export function formatAudit(audit: SoakAudit): string {
  const settled = audit.settledApplied + audit.settledNotApplied;
  const share = audit.uncertain === 0 ? 0 : (100 * audit.leftForPerson) / audit.uncertain;
  return [
    `kills: ${audit.kills.workers + audit.kills.api} (workers ${audit.kills.workers}, api ${audit.kills.api})`,
    `runs ${audit.runs}, steps ${audit.steps}, calls ${audit.calls} (writes ${audit.writes}); outcomes ${JSON.stringify(audit.outcomes)}`,
    `duplicates ${audit.duplicates}, lost ${audit.lost}, stuck ${audit.stuck}`,
    `uncertain ${audit.uncertain}: settled by a reconciler ${settled} (applied ${audit.settledApplied}, not applied ${audit.settledNotApplied}), left for a person ${audit.leftForPerson} (${share.toFixed(1)} %)`,
    `problems ${audit.problems.length}${audit.problems.length === 0 ? '' : `:\n  ${audit.problems.slice(0, 50).join('\n  ')}`}`,
    `took ${(audit.durationMs / 1000).toFixed(1)} s`,
  ].join('\n');
}
