import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Principal } from '@veetbot/domain';
import { type Runtime, toStoredBatch } from '@veetbot/runtime';
import { createApiStores, type Database } from '@veetbot/store-postgres';
import type pg from 'pg';
import { startNode } from './split-scene';

/**
 * What the scale-out and noisy-neighbour suites share (docs/adr/0070): built worker processes
 * on one PostgreSQL, one-call steps of `demo.external_write` stored pending the way the api
 * stores them (veetbot_submit_step), behind a gate, and the database's own account of what ran.
 */
export const TOOL = 'demo.external_write';
const REPO = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

export interface WorkerProcess {
  readonly pid: number | undefined;
  /** Openings this worker found busy (another worker had opened the run first; its log's `step busy` lines). */
  busyOpenings(): number;
  stop(): Promise<void>;
}

/** `count` built worker processes (apps/worker/dist/main.mjs under plain node), each started and claiming. */
export async function startWorkers(count: number, env: Record<string, string>): Promise<WorkerProcess[]> {
  const started = Array.from({ length: count }, () =>
    startNode(join(REPO, 'apps/worker/dist/main.mjs'), [], { VEETBOT_WORKER_PORT: '0', VEETBOT_WORKER_POLL_MS: '200', ...env }),
  );
  try {
    await Promise.all(started.map((w) => w.waitFor(/ started: /)));
  } catch (error) {
    for (const w of started) w.child.kill('SIGKILL');
    throw error;
  }
  return started.map((w) => ({
    pid: w.child.pid,
    busyOpenings: () => w.output().match(/"msg":"step busy\b/g)?.length ?? 0,
    async stop() {
      if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGTERM');
      await w.exited;
    },
  }));
}

/** A tenant's one-call step as the api stores it: pending, its batch in the stored form. */
export async function submitPending(
  database: Database,
  tenantId: string,
  principal: Principal,
  runId: string,
  callId: string,
): Promise<void> {
  const batch = toStoredBatch({
    principal,
    calls: [{ callId, toolName: TOOL, arguments: { line: `bench ${callId}` }, contextTrust: ['user'] }],
  });
  const submitted = await createApiStores(database).stepSubmissions.submit(tenantId, {
    runId,
    stepNumber: 1,
    batch,
    createdAt: new Date(),
  });
  if (submitted.step === null) throw new Error(`the step of run ${runId} was not stored`);
}

/** `count` fresh runs of the tenant's session, each with one pending step (call id `c-<run>`). */
export async function pendingRuns(
  runtime: Runtime,
  tenant: { readonly tenantId: string; readonly principal: Principal; readonly sessionId: string },
  count: number,
): Promise<string[]> {
  const deadlineAt = new Date(Date.now() + 3_600_000);
  const runs: string[] = [];
  // A few at a time: the pool is the bench's own, and PostgreSQL is shared with the workers.
  for (let i = 0; i < count; i += 16) {
    const made = await Promise.all(
      Array.from({ length: Math.min(16, count - i) }, async () => {
        const run = await runtime.createRun(tenant.tenantId, tenant.sessionId, { deadlineAt });
        return run.id;
      }),
    );
    runs.push(...made);
  }
  return runs;
}

/** Hold runs out of every claim: a live lease no worker owns (the claim skips a run leased live). */
export async function closeGate(pool: pg.Pool, runIds: readonly string[]): Promise<void> {
  await pool.query(`update runs set lease_owner = 'bench-gate', lease_expires_at = now() + interval '1 hour' where id = any($1::uuid[])`, [
    runIds,
  ]);
}

/** Release them all in one commit, and wake every worker (NOTIFY on the steps channel). */
export async function openGate(pool: pg.Pool, runIds: readonly string[]): Promise<void> {
  await pool.query(
    `update runs set lease_owner = null, lease_expires_at = null where id = any($1::uuid[]) and lease_owner = 'bench-gate'`,
    [runIds],
  );
  await pool.query(`select pg_notify('veetbot_steps', '')`);
}

/** How many of these runs' steps are completed. */
export async function completedSteps(pool: pg.Pool, runIds: readonly string[]): Promise<number> {
  const { rows } = await pool.query(`select count(*)::int as n from steps where run_id = any($1::uuid[]) and status = 'completed'`, [
    runIds,
  ]);
  return Number(rows[0]?.n ?? 0);
}

export interface DuplicateCheck {
  readonly steps: number;
  readonly invocations: number;
  readonly succeeded: number;
  /** Invocation rows beyond one per (run, call id): must be 0. */
  readonly duplicateRows: number;
  /** Calls attempted more than once (attempt_number > 1). */
  readonly retried: number;
  /** Outbox records (the effect) beyond one per idempotency key: must be 0. */
  readonly duplicateEffects: number;
  readonly effects: number;
}

/**
 * What the database (and the outbox, the effect itself) says ran: one invocation row per call,
 * succeeded, and one outbox record per idempotency key. A step run twice by two workers would
 * show as a second record of its key (the row dedups; an effect sent twice does not).
 */
export async function duplicateCheck(pool: pg.Pool, tenantIds: readonly string[], outboxPath: string): Promise<DuplicateCheck> {
  const [steps] = (await pool.query(`select count(*)::int as n from steps where tenant_id = any($1::text[])`, [tenantIds])).rows;
  const [rows] = (
    await pool.query(
      `select count(*)::int as invocations,
              count(*) filter (where status = 'succeeded')::int as succeeded,
              (count(*) - count(distinct (run_id, call_id)))::int as duplicate_rows,
              count(*) filter (where attempt_number > 1)::int as retried,
              array_agg(idempotency_key) as keys
       from tool_invocations where tenant_id = any($1::text[])`,
      [tenantIds],
    )
  ).rows;
  const keys = rows?.keys as string[] | null;
  const ours = new Set(keys ?? []);
  const text = await readFile(outboxPath, 'utf8').catch(() => '');
  const seen = new Map<string, number>();
  for (const line of text.split('\n')) {
    const key = line.split('\t')[0] ?? '';
    if (ours.has(key)) seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  const effects = [...seen.values()].reduce((a, b) => a + b, 0);
  return {
    steps: Number(steps?.n ?? 0),
    invocations: Number(rows?.invocations ?? 0),
    succeeded: Number(rows?.succeeded ?? 0),
    duplicateRows: Number(rows?.duplicate_rows ?? 0),
    retried: Number(rows?.retried ?? 0),
    duplicateEffects: effects - seen.size,
    effects,
  };
}

/** A line, and a thrown error when anything ran twice or did not run. */
export function assertNoDuplicates(check: DuplicateCheck, expectedSteps: number): string {
  const line = `from the database: ${check.steps} steps, ${check.invocations} invocation rows (${check.succeeded} succeeded, ${check.retried} retried), ${check.duplicateRows} duplicate rows; the outbox: ${check.effects} effects, ${check.duplicateEffects} duplicates`;
  if (
    check.duplicateRows !== 0 ||
    check.duplicateEffects !== 0 ||
    check.steps !== expectedSteps ||
    check.invocations !== expectedSteps ||
    check.succeeded !== expectedSteps ||
    check.effects !== expectedSteps
  ) {
    throw new Error(`duplicates or missing calls: ${line} (expected ${expectedSteps} of each)`);
  }
  return line;
}

/** CPU milliseconds so far of the given processes and of every postgres process (by pid). */
export async function cpuNow(pids: readonly (number | undefined)[]): Promise<{ workers: number; postgres: Map<string, number> }> {
  const ticksOf = async (pid: number | string): Promise<number> => {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
    if (stat === null) return 0;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  };
  let workers = 0;
  for (const pid of pids) if (pid !== undefined) workers += await ticksOf(pid);
  const postgres = new Map<string, number>();
  const { readdir } = await import('node:fs/promises');
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const comm = await readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '');
    if (comm.startsWith('postgres')) postgres.set(entry, await ticksOf(entry));
  }
  return { workers, postgres };
}

/** CPU ms spent between two readings: the workers', and PostgreSQL's (a backend born in between counts from zero). */
export function cpuBetween(
  before: { workers: number; postgres: Map<string, number> },
  after: { workers: number; postgres: Map<string, number> },
): { workers: number; postgres: number } {
  let postgres = 0;
  for (const [pid, ms] of after.postgres) postgres += ms - (before.postgres.get(pid) ?? 0);
  return { workers: after.workers - before.workers, postgres };
}

/** Calls and total time (ms) of each veetbot_* function so far, from pg_stat_user_functions (track_functions = 'pl'). */
export async function functionStats(pool: pg.Pool): Promise<Map<string, { calls: number; ms: number }>> {
  const { rows } = await pool.query(
    `select funcname, calls::float8 as calls, total_time::float8 as ms from pg_stat_user_functions where funcname like 'veetbot\\_%'`,
  );
  return new Map(rows.map((r) => [String(r.funcname), { calls: Number(r.calls), ms: Number(r.ms) }]));
}

/** Function statistics are flushed by each backend at most once a second: wait that out, then read. */
export async function settledFunctionStats(pool: pg.Pool): Promise<Map<string, { calls: number; ms: number }>> {
  await new Promise((r) => setTimeout(r, 1_100));
  return functionStats(pool);
}
