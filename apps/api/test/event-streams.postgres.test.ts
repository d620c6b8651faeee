import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { provisionTenantKey } from '@veetbot/composition';
import { createDatabase, createStores, dropDatabase, migrate, openDatabase, type Database } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type ApiApp } from '../src/app';
import { composeSystem, type ComposedSystem } from '../src/compose';
import { ALL_SCOPES } from './harness';

/*
 * docs/adr/0054 on PostgreSQL: N open SSE streams are woken by the api process's ONE listening
 * connection — by an append committed on another connection, and by the finish of a step a
 * separate worker composition (its own pool, its own listener) runs — and, while nothing happens,
 * the api's pool is not polled once per stream: over a quiet 2 s with 50 streams open it is
 * checked out a small constant number of times (the fallback check: one read per tenant every
 * 5 s), where the old poll made 50 × 8 = 400.
 */

const STREAMS = 50;

let dbName: string;
let apiDatabase: Database;
let workerDatabase: Database;
let otherConnection: Database;
let apiSystem: ComposedSystem;
let workerSystem: ComposedSystem;
let api: ApiApp;
let dataDir: string;
let key: string;
const TENANT = 'tenant-streams';

class Stream {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  text = '';
  constructor(response: Response) {
    this.#reader = response.body!.getReader();
  }
  async until(pattern: RegExp): Promise<void> {
    while (!pattern.test(this.text)) {
      const { value, done } = await this.#reader.read();
      if (done) throw new Error(`stream ended before ${pattern}:\n${this.text}`);
      this.text += new TextDecoder().decode(value);
    }
  }
  cancel(): Promise<void> {
    return this.#reader.cancel();
  }
}

type Pool = Extract<Database['native'], { driver: 'postgres' }>['pool'];

const poolOf = (database: Database): Pool => {
  const native = database.native;
  if (native.driver !== 'postgres') throw new Error('PostgreSQL only');
  return native.pool;
};

async function request(method: string, path: string, body?: unknown): Promise<Response> {
  return api.app.request(`http://api.test${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** Until no client of the pool is checked out and nobody waits for one: every stream is waiting. */
async function poolQuiet(pool: Pool): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    if (pool.totalCount === pool.idleCount && pool.waitingCount === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('the pool never went quiet');
}

beforeAll(async () => {
  dbName = `veetbot_streams_${randomBytes(6).toString('hex')}`;
  const url = await createDatabase(process.env.DATABASE_URL!, dbName);
  apiDatabase = await openDatabase({ url });
  await migrate(apiDatabase);
  workerDatabase = await openDatabase({ url });
  otherConnection = await openDatabase({ url });
  dataDir = await mkdtemp(join(tmpdir(), 'veetbot-streams-'));
  // The api process: its worker loop is not started (the steps run in the other composition).
  apiSystem = await composeSystem({
    database: apiDatabase,
    dataDir,
    mcp: false,
    sandbox: false,
    apiSettings: { eventStreamsPerTenant: STREAMS + 10 },
  });
  api = buildApp(apiSystem.deps);
  // A worker, as `pnpm start:worker` composes it: another pool, another listener.
  workerSystem = await composeSystem({
    database: workerDatabase,
    dataDir,
    mcp: false,
    sandbox: false,
    workerSettings: { pollIntervalMs: 60_000, sweepIntervalMs: 600_000 },
  });
  workerSystem.worker.start();
  key = (
    await provisionTenantKey(apiSystem.stores, {
      tenantId: TENANT,
      tenantName: TENANT,
      principalId: 'admin',
      scopes: ALL_SCOPES,
      now: new Date(),
    })
  ).key;
}, 120_000);

afterAll(async () => {
  await workerSystem?.close({ drainMs: 5_000 });
  await apiSystem?.close({ drainMs: 5_000 });
  for (const database of [apiDatabase, workerDatabase, otherConnection]) await database?.close();
  if (dbName !== undefined) await dropDatabase(process.env.DATABASE_URL!, dbName);
  await rm(dataDir, { recursive: true, force: true });
});

describe('event streams on PostgreSQL (docs/adr/0054)', () => {
  it(`${STREAMS} open streams: no per-stream polling while quiet; an append on another connection and a step run by a separate worker reach every one`, async () => {
    const session = await request('POST', '/v1/sessions', { agent_id: 'agent-1' });
    const sessionId = ((await session.json()) as { id: string }).id;
    const run = await request('POST', '/v1/runs', { session_id: sessionId, deadline_seconds: 600 });
    const runId = ((await run.json()) as { id: string }).id;

    const streams: Stream[] = [];
    for (let i = 0; i < STREAMS; i++) {
      const response = await request('GET', `/v1/events?run_id=${runId}`);
      expect(response.status).toBe(200);
      streams.push(new Stream(response));
    }
    await Promise.all(streams.map((s) => s.until(/: connected/)));

    // Quiet: every stream has read once and waits. Count the api pool's check-outs for 2 s.
    const pool = poolOf(apiDatabase);
    await poolQuiet(pool);
    let checkouts = 0;
    const count = () => checkouts++;
    pool.on('acquire', count);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    pool.off('acquire', count);
    // At most one fallback check (5 s apart) can fall in the window; 400 with a poll per stream.
    expect(checkouts).toBeLessThanOrEqual(2);

    // An event committed by another connection (another process, as far as the api can tell).
    await createStores(otherConnection).events.append(TENANT, [
      { runId, type: 'test.remote', payload: { n: 1 }, derivationKey: `test.remote:${randomUUID()}`, createdAt: new Date() },
    ]);
    await Promise.all(streams.map((s) => s.until(/event: test\.remote/)));

    // A step the other composition's worker runs: its events come from the hot path (no
    // notification per event); its finish's notification wakes the run's streams here.
    const step = await request('POST', `/v1/runs/${runId}/steps`, {
      step_number: 1,
      calls: [{ call_id: 'c1', tool_name: 'math.evaluate', arguments: { expression: '6*7' }, context_trust: ['user'] }],
      wait_seconds: 30,
    });
    expect(step.status).toBe(200);
    await Promise.all(streams.map((s) => s.until(/event: tool\.call\.completed/)));
    for (const s of streams) expect(s.text.match(/event: tool\.call\.completed/g)).toHaveLength(1);

    await Promise.all(streams.map((s) => s.cancel()));
  });
});
