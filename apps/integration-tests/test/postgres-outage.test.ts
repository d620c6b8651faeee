import { startTcpProxy, startThrowawayCluster, type TcpProxy, type ThrowawayCluster } from '@veetbot/pg-cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScene, until, workerOperationsUrl, type E2eScene } from '../src/e2e-processes';
import { auditDeployment, formatAudit, startLoad } from '../src/kill-soak';

/**
 * Issue 25 item 5 (docs/adr/0067): PostgreSQL unreachable for 20 s, and PostgreSQL restarted in
 * immediate mode (a crash: every backend killed, WAL replayed on start) held down 20 s, both
 * under load. The database is a throwaway cluster this test owns (@veetbot/pg-cluster; never
 * the shared server), reached through a TCP proxy the test controls. Meanwhile the api answers
 * 503 `service.unavailable` (JSON, Retry-After) and its /readyz and every worker's are 503 with
 * `reachable: false`; afterwards every process is the same one (nobody restarted them), they are
 * ready again by themselves, the load finishes, and the audit finds nothing lost, duplicated or
 * stuck.
 */
const OUTAGE_MS = 20_000;
/** A request in the outage must be answered within this (never hang on a dead connection). */
const ANSWER_WITHIN_MS = 15_000;

let cluster: ThrowawayCluster;
let proxy: TcpProxy;
let scene: E2eScene;

beforeAll(async () => {
  cluster = await startThrowawayCluster();
  proxy = await startTcpProxy({ host: '127.0.0.1', port: cluster.port });
  scene = await startScene({
    workers: 2,
    built: true,
    serverUrl: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`,
    workerEnv: { VEETBOT_LEASE_TTL_MS: '3000', VEETBOT_WORKER_SWEEP_MS: '500' },
  });
}, 180_000);

afterAll(async () => {
  if (process.env.SOAK_DEBUG_OUTPUT !== undefined && scene !== undefined) {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(
      process.env.SOAK_DEBUG_OUTPUT,
      [scene.api, ...scene.workers].map((p) => `=== ${p.child.pid} ${p.child.exitCode} ${p.child.signalCode}\n${p.output()}`).join('\n'),
    );
  }
  // Reachable again, so the scene can drop its database.
  proxy?.restore();
  if (cluster !== undefined && !cluster.running) await cluster.start().catch(() => undefined);
  await scene?.close();
  await proxy?.close();
  await cluster?.remove();
});

async function timed(url: string, init: RequestInit = {}): Promise<{ status: number; body: unknown; retryAfter: string | null }> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(ANSWER_WITHIN_MS) });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text, and the assertion shows it
  }
  return { status: response.status, body, retryAfter: response.headers.get('retry-after') };
}

/**
 * What the api and each worker answer while the database is gone, checked in rounds (the
 * requests of a round at once) until the outage has lasted OUTAGE_MS; it lasts at least that.
 */
async function duringOutage(what: string): Promise<void> {
  const ends = Date.now() + OUTAGE_MS;
  do {
    const [session, apiReady, health, ...workersReady] = await Promise.all([
      timed(`${scene.baseUrl}/v1/sessions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${scene.demoKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ agent_id: 'outage' }),
      }),
      timed(`${scene.baseUrl}/readyz`),
      timed(`${scene.baseUrl}/healthz`),
      ...liveWorkers().map((worker) => timed(`${workerOperationsUrl(worker)}/readyz`)),
    ]);
    expect(session, `${what}: a request to the api`).toMatchObject({
      status: 503,
      body: { error: { code: 'service.unavailable' } },
      retryAfter: expect.stringMatching(/^\d+$/),
    });
    expect(apiReady, `${what}: the api's /readyz`).toMatchObject({
      status: 503,
      body: { status: 'not_ready', database: { reachable: false } },
    });
    expect(workersReady, `${what}: each worker's /readyz`).toHaveLength(2);
    for (const ready of workersReady)
      expect(ready, `${what}: a worker's /readyz`).toMatchObject({ status: 503, body: { status: 'not_ready' } });
    // Liveness is not readiness: the processes are up and say so.
    expect(health.status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_000));
  } while (Date.now() < ends);
}

const liveWorkers = () => scene.workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);

async function readyAgain(what: string): Promise<void> {
  const ready = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) }).catch(() => null))?.status ?? 0;
  await until(
    () => ready(`${scene.baseUrl}/readyz`),
    (s) => s === 200,
    60_000,
    `${what}: the api ready again`,
  );
  for (const worker of liveWorkers())
    await until(
      () => ready(`${workerOperationsUrl(worker)}/readyz`),
      (s) => s === 200,
      60_000,
      `${what}: a worker ready again`,
    );
}

describe('PostgreSQL gone under load (issue 25 item 5)', () => {
  it('unreachable 20 s (connections dropped, new ones swallowed), then crashed and restarted 20 s later: 503 service.unavailable meanwhile, both roles reconnect, nothing lost or duplicated', async () => {
    const pids = [scene.api.child.pid, ...scene.workers.map((w) => w.child.pid)];
    const load = startLoad(scene, { lanes: 4, writesPerStep: 6, stepsPerRun: 20 });
    const began = Date.now();
    await until(
      async () => load.outcomes.size,
      (n) => n >= 4,
      60_000,
      'steps completed before the outage',
    );

    // 1. A partition: every open connection dropped, every new one accepted and never answered.
    proxy.cut('blackhole');
    await duringOutage('unreachable');
    proxy.restore();
    await readyAgain('after the partition');
    const afterPartition = load.outcomes.size;
    await until(
      async () => load.outcomes.size,
      (n) => n >= afterPartition + 4,
      60_000,
      'steps completing after the partition',
    );

    // 2. A crash: immediate mode (no checkpoint; every backend killed), down for 20 s.
    await cluster.stop('immediate');
    await duringOutage('stopped');
    await cluster.start();
    await readyAgain('after the restart');
    const afterRestart = load.outcomes.size;
    await until(
      async () => load.outcomes.size,
      (n) => n >= afterRestart + 4,
      60_000,
      'steps completing after the restart',
    );

    // Nobody restarted a process: the same pids, all alive.
    expect([scene.api.child.pid, ...liveWorkers().map((w) => w.child.pid)]).toEqual(pids);

    await load.stop(90_000);
    const audit = await auditDeployment(scene, load, {
      kills: { workers: 0, api: 0 },
      problems: [],
      began,
      settleUntil: Date.now() + 60_000,
    });
    const report = formatAudit(audit);
    console.log(report);
    expect(audit.problems, report).toEqual([]);
    expect(audit.duplicates, report).toBe(0);
    expect(audit.lost, report).toBe(0);
    expect(audit.stuck, report).toBe(0);
    expect(audit.settledApplied + audit.settledNotApplied + audit.leftForPerson, report).toBe(audit.uncertain);
  }, 360_000);
});
