import { randomBytes } from 'node:crypto';
import { StoreError } from '@veetbot/domain';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/database';
import { migrate } from '../src/migrate';
import { createStores } from '../src/stores';
import { type StoreHarness, storeContract } from './contract';
import { intent, lease, newScene } from './contract/harness';
import { terminalJson } from '../src/repositories/hot-path';
import { createStepQueue } from '../src/step-queue/step-queue';

// Included only when DATABASE_URL is set (vitest.config.ts). This file gets a database of its
// own on that server, created here and dropped at the end, so runs never share state.
const serverUrl = process.env.DATABASE_URL ?? '';
const databaseName = `veetbot_test_${randomBytes(6).toString('hex')}`;
let harness: StoreHarness | undefined;

function urlFor(database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  await admin((client) => client.query(`CREATE DATABASE ${databaseName}`));
  // A real pool: the concurrency tests (50 inserts of one key, lease races) run in parallel.
  const database = await openDatabase({ url: urlFor(databaseName), poolSize: 16 });
  // Two processes starting at once on an empty database: the advisory lock serialises them,
  // the second finds everything applied.
  await Promise.all([migrate(database), migrate(database)]);
  harness = { database, stores: createStores(database) };
}, 120_000);

afterAll(async () => {
  await harness?.database.close();
  await admin((client) => client.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`));
});

const get = (): StoreHarness => {
  if (!harness) throw new Error('PostgreSQL harness not ready');
  return harness;
};

storeContract(get);

// What only a server with real concurrent connections can produce: SQLSTATEs classified into
// the port's error codes (STYLE.md item 6).
describe('driver errors from a real server', () => {
  it('57014 (statement timeout) is store.cancelled', async () => {
    const attempt = get().database.transaction({ role: 'owner' }, async (tx) => {
      await tx.execute(sql`SET LOCAL statement_timeout = 50`);
      await tx.execute(sql`SELECT pg_sleep(2)`);
    });
    await expect(attempt).rejects.toSatisfy((e: unknown) => StoreError.isInstance(e) && e.code === 'store.cancelled' && !e.retryable);
  });

  it('40001 (serialization failure) is store.serialization, retryable', async () => {
    const { pool } = get().database.native as { pool: pg.Pool };
    await pool.query('CREATE TABLE IF NOT EXISTS serial_probe (id int primary key, v int)');
    await pool.query('INSERT INTO serial_probe VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET v = 0');
    const first = await pool.connect();
    try {
      await first.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await first.query('SELECT v FROM serial_probe WHERE id = 1');
      await pool.query('UPDATE serial_probe SET v = v + 1 WHERE id = 1');
      const attempt = get().database.transaction({ role: 'owner' }, async () => {
        // Run the conflicting write on the transaction that read the old snapshot.
        await first.query('UPDATE serial_probe SET v = v + 10 WHERE id = 1');
      });
      await expect(attempt).rejects.toSatisfy((e: unknown) => StoreError.isInstance(e) && e.code === 'store.serialization' && e.retryable);
    } finally {
      await first.query('ROLLBACK');
      first.release();
    }
  });
});

// The step queue's two PostgreSQL-only properties: claims skip rows another claim holds, and
// a lost LISTEN connection is re-made (waiters are woken to re-read what they wait for).
describe('step queue on a real server', () => {
  const early = new Date(Date.UTC(1980, 0, 1));

  it('SKIP LOCKED: a claim never returns a step another claim holds locked', async () => {
    const h = get();
    const scene = await newScene(h);
    for (let n = 1; n <= 4; n += 1) {
      await h.stores.steps.insert(scene.tenantId, {
        runId: scene.runId,
        stepNumber: n,
        batch: {},
        createdAt: new Date(early.getTime() + n),
      });
    }
    const ours = (claims: { tenantId: string; stepNumber: number }[]) =>
      claims.filter((c) => c.tenantId === scene.tenantId).map((c) => c.stepNumber);
    const queue = await createStepQueue(h.database);
    const { pool } = h.database.native as { pool: pg.Pool };
    const holder = await pool.connect();
    try {
      // Another worker's claim, caught mid-transaction: the same role, the same locking read.
      await holder.query('BEGIN');
      await holder.query(`select set_config('role', 'veetbot_maintenance', true)`);
      const held = await holder.query(
        'select step_number from steps where tenant_id = $1 and status = $2 order by created_at limit 2 for update skip locked',
        [scene.tenantId, 'pending'],
      );
      expect(held.rows.map((r: { step_number: number }) => r.step_number)).toEqual([1, 2]);
      expect(ours(await queue.claimPending(1000, new Date(Date.UTC(2040, 0, 1))))).toEqual([3, 4]);
      await holder.query('ROLLBACK');
      expect(ours(await queue.claimPending(1000, new Date(Date.UTC(2040, 0, 1))))).toEqual([1, 2, 3, 4]);
    } finally {
      holder.release();
      await queue.close();
    }
  });

  it('a killed LISTEN connection is re-made: waiters wake, and later notifications arrive again', async () => {
    const h = get();
    const scene = await newScene(h);
    const step = { tenantId: scene.tenantId, runId: scene.runId, stepNumber: 1 };
    const errors: unknown[] = [];
    const queue = await createStepQueue(h.database, { reconnectMs: 50, onListenError: (e) => errors.push(e) });
    try {
      const waiting = queue.waitForStep(step, 20_000);
      const { pool } = h.database.native as { pool: pg.Pool };
      const killed = await pool.query(
        `select pg_terminate_backend(pid) as killed from pg_stat_activity where datname = current_database() and query like 'LISTEN%'`,
      );
      expect(killed.rows).toHaveLength(1);
      const started = performance.now();
      await waiting;
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.every((e) => StoreError.isInstance(e))).toBe(true);
      const again = queue.waitForWork(20_000);
      const t = performance.now();
      await queue.notify(step);
      await again;
      expect(performance.now() - t).toBeLessThan(5_000);
    } finally {
      await queue.close();
    }
  });
});

// docs/adr/0074: the fence moved from its own statement into each guarded UPDATE's WHERE. Its
// lock must still be held until commit, so a new acquisition of the lease (a non-key UPDATE of
// the run row) waits for the write instead of slipping in before it commits.
describe('fenced writes on a real server', () => {
  it('claim, mark and complete hold the run row until commit: the lock a new acquisition needs is refused meanwhile', async () => {
    const h = get();
    const scene = await newScene(h);
    const fence = await lease(h, scene, 'worker-a', scene.t0);
    const row = intent(scene);
    await h.stores.invocations.insertIntent(scene.tenantId, row, []);
    const at = scene.t0.toISOString();
    const token = fence.fencingToken;
    const terminal = terminalJson({
      status: 'succeeded',
      outcomeStatus: 'succeeded',
      reasonCode: 'tool.succeeded',
      result: null,
      error: null,
      outputBytes: 0,
      truncated: false,
      artifactId: null,
      finishedAt: scene.t0,
    });
    const writes: [string, unknown[]][] = [
      ['select veetbot_claim($1, $2, $3, $4, $5, $6, $7)', [scene.tenantId, row.id, scene.runId, token, at, scene.runId, '[]']],
      ['select veetbot_mark_effect_sent($1, $2, $3, $4, $5)', [scene.tenantId, row.id, scene.runId, token, at]],
      ['select veetbot_complete($1, $2, $3, $4, $5, $6, $7)', [scene.tenantId, row.id, scene.runId, token, terminal, scene.runId, '[]']],
    ];
    const { pool } = h.database.native as { pool: pg.Pool };
    const acquisitionLock = 'select 1 from runs where id = $1 for no key update nowait';
    for (const [text, values] of writes) {
      const writer = await pool.connect();
      const other = await pool.connect();
      try {
        await writer.query('BEGIN');
        await writer.query(text, values);
        await expect(other.query(acquisitionLock, [scene.runId])).rejects.toMatchObject({ code: '55P03' });
        await writer.query('COMMIT');
        expect((await other.query(acquisitionLock, [scene.runId])).rowCount).toBe(1);
      } finally {
        writer.release();
        other.release();
      }
    }
    expect(await h.stores.invocations.getById(scene.tenantId, row.id)).toMatchObject({ status: 'succeeded' });
  });
});
