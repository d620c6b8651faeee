import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { provisionTenantKey, revokeApiKey } from '@veetbot/composition';
import { createDatabase, dropDatabase, migrate, openDatabase, type Database } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type ApiApp } from '../src/app';
import { composeSystem, type ComposedSystem } from '../src/compose';

/*
 * docs/adr/0075 on PostgreSQL: two api processes (two compositions, each with its own pool and
 * its own listening connection) each hold a key they have checked. A revocation made through
 * one is refused by the other within a second — the database's trigger notifies in the revoking
 * transaction. When the listening connection is lost (its backend terminated), the cache is
 * cleared and bypassed until LISTEN is back: a key revoked meanwhile (a notification nobody
 * heard) is never served from memory.
 */

const TENANT = 'tenant-keys';
const REFUSED_WITHIN_MS = 1_000;

let dbName: string;
let databases: Database[] = [];
let admin: Database;
let systems: ComposedSystem[] = [];
let apis: ApiApp[] = [];
let dataDir: string;

type Pool = Extract<Database['native'], { driver: 'postgres' }>['pool'];

const poolOf = (database: Database): Pool => {
  const native = database.native;
  if (native.driver !== 'postgres') throw new Error('PostgreSQL only');
  return native.pool;
};

async function get(api: ApiApp, key: string): Promise<{ status: number; code: string | null }> {
  const response = await api.app.request('http://api.test/v1/mcp/servers', { headers: { Authorization: `Bearer ${key}` } });
  const body = (await response.json()) as { error?: { code: string } };
  return { status: response.status, code: body.error?.code ?? null };
}

/** Polls until `check` holds; throws after `ms`. The deadline is the assertion, no sleep decides it. */
async function within(ms: number, check: () => Promise<boolean> | boolean): Promise<void> {
  const started = performance.now();
  for (;;) {
    if (await check()) return;
    if (performance.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function newKey(principalId: string): Promise<string> {
  return (
    await provisionTenantKey(systems[0]!.stores, {
      tenantId: TENANT,
      tenantName: TENANT,
      principalId,
      scopes: ['demo.write'],
      now: new Date(),
    })
  ).key;
}

beforeAll(async () => {
  dbName = `veetbot_keys_${randomBytes(6).toString('hex')}`;
  const url = await createDatabase(process.env.DATABASE_URL!, dbName);
  admin = await openDatabase({ url });
  await migrate(admin);
  dataDir = await mkdtemp(join(tmpdir(), 'veetbot-keys-'));
  for (let i = 0; i < 2; i++) {
    const database = await openDatabase({ url });
    databases.push(database);
    // An api process: its own pool and its own listener; no worker loop started.
    const system = await composeSystem({ database, dataDir, mcp: false, sandbox: false });
    systems.push(system);
    apis.push(buildApp(system.deps));
  }
}, 120_000);

afterAll(async () => {
  for (const system of systems) await system.close({ drainMs: 1_000 });
  for (const database of [...databases, admin]) await database?.close();
  if (dbName !== undefined) await dropDatabase(process.env.DATABASE_URL!, dbName);
  await rm(dataDir, { recursive: true, force: true });
  systems = [];
  databases = [];
  apis = [];
});

describe('API key revocation across api processes on PostgreSQL (docs/adr/0075)', () => {
  it('a key revoked through one api process is refused by the other within a second, though it held the key', async () => {
    const [a, b] = apis as [ApiApp, ApiApp];
    const key = await newKey('agent-1');
    expect(await get(a, key)).toEqual({ status: 200, code: null });
    expect(await get(b, key)).toEqual({ status: 200, code: null });
    const cacheB = systems[1]!.deps.apiKeyCache!;
    expect(cacheB.serving).toBe(true);
    expect(cacheB.size).toBe(1);

    await revokeApiKey(systems[0]!.stores, { key }, new Date());
    await within(REFUSED_WITHIN_MS, async () => (await get(b, key)).status === 401);
    expect(await get(b, key)).toEqual({ status: 401, code: 'auth.revoked' });
    expect(cacheB.size).toBe(0);
    // The revoking process hears its own notification the same way (a CLI revoking is a third process).
    await within(REFUSED_WITHIN_MS, async () => (await get(a, key)).status === 401);
    expect(await get(a, key)).toEqual({ status: 401, code: 'auth.revoked' });
  });

  it('the listening connection terminated: the cache is cleared and bypassed, a key revoked meanwhile is refused, and it serves again once LISTEN is back', async () => {
    const [, b] = apis as [ApiApp, ApiApp];
    const cacheB = systems[1]!.deps.apiKeyCache!;
    const held = await newKey('agent-2');
    expect(await get(b, held)).toEqual({ status: 200, code: null });
    expect(cacheB.size).toBe(1);

    // Every listening backend of this database (both api processes'): the one query they ran is LISTEN.
    const terminated = await poolOf(admin).query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = $1 and query like 'LISTEN veetbot_%' and pid <> pg_backend_pid()`,
      [dbName],
    );
    expect(terminated.rows).toHaveLength(2);
    await poolOf(admin).query('select pg_terminate_backend(pid) from unnest($1::int[]) as pid', [terminated.rows.map((r) => r.pid)]);
    await within(5_000, () => !cacheB.serving);
    expect(cacheB.size).toBe(0);

    // Revoked while B may not be listening: whatever B heard, it must read the row.
    await revokeApiKey(systems[0]!.stores, { key: held }, new Date());
    expect(await get(b, held)).toEqual({ status: 401, code: 'auth.revoked' });

    // The listener is re-made (1 s later): keys are held again, and a revocation is heard again.
    await within(10_000, () => cacheB.serving);
    const again = await newKey('agent-3');
    expect(await get(b, again)).toEqual({ status: 200, code: null });
    expect(cacheB.size).toBe(1);
    await revokeApiKey(systems[0]!.stores, { key: again }, new Date());
    await within(REFUSED_WITHIN_MS, async () => (await get(b, again)).status === 401);
    expect(cacheB.size).toBe(0);
  });

  it('a key deleted by the operator is refused within a second; a TRUNCATE of api_keys empties every cache', async () => {
    const [a, b] = apis as [ApiApp, ApiApp];
    const deleted = await newKey('agent-4');
    const kept = await newKey('agent-5');
    for (const api of [a, b]) for (const key of [deleted, kept]) expect(await get(api, key)).toEqual({ status: 200, code: null });
    const cacheB = systems[1]!.deps.apiKeyCache!;
    expect(cacheB.size).toBe(2);

    await poolOf(admin).query(`delete from api_keys where principal_id = 'agent-4'`);
    await within(REFUSED_WITHIN_MS, async () => (await get(b, deleted)).status === 401);
    expect(await get(b, deleted)).toEqual({ status: 401, code: 'auth.invalid' });
    expect(await get(b, kept)).toEqual({ status: 200, code: null });
    expect(cacheB.size).toBe(1);

    await poolOf(admin).query('truncate api_keys');
    await within(REFUSED_WITHIN_MS, () => cacheB.size === 0 && systems[0]!.deps.apiKeyCache!.size === 0);
    for (const api of [a, b]) expect(await get(api, kept)).toEqual({ status: 401, code: 'auth.invalid' });
  });
});
