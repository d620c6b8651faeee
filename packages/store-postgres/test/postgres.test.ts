import { randomBytes } from 'node:crypto';
import { StoreError } from '@veetbot/domain';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/database';
import { migrate } from '../src/migrate';
import { createStores } from '../src/stores';
import { type StoreHarness, storeContract } from './contract';

// Included only when DATABASE_URL is set (vitest.config.ts). This file gets a database of its
// own on that server, created here and dropped at the end, so runs never share state.
const serverUrl = process.env['DATABASE_URL'] ?? '';
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
