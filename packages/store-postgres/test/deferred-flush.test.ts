import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database, type TransactionScope } from '../src/database';
import { migrate } from '../src/migrate';
import { createStores } from '../src/stores';
import { newScene, type Scene, type StoreHarness } from './contract/harness';

/**
 * docs/adr/0043: the step's own bookkeeping commits are not waited for on disk — the lease taken
 * and released, a step stored RUNNING, a step's RUNNING and COMPLETED — and nothing else is: a
 * PENDING step (a promise to a client), a run's status, every other transaction keep the
 * deployment's setting. The setting is the transaction's own and never outlives it.
 */
describe('deferred flush of the step bookkeeping (PGlite)', () => {
  let database: Database;
  let h: StoreHarness;
  let scene: Scene;
  const scopes: TransactionScope[] = [];

  beforeAll(async () => {
    database = await openDatabase({ dataDir: 'memory://' });
    await migrate(database);
    h = { stores: createStores(database), database };
    scene = await newScene(h);
    // Record the scope of every transaction the stores open, and let it run as it would.
    const original = database.transaction.bind(database);
    Object.assign(database, {
      transaction: <T>(scope: TransactionScope, fn: Parameters<Database['transaction']>[1]) => {
        scopes.push(scope);
        return original(scope, fn as never) as Promise<T>;
      },
    });
  });
  afterAll(async () => {
    await database.close();
  });

  const setting = async (deferFlush: boolean): Promise<string> =>
    database.tenant(
      scene.tenantId,
      async (tx) => {
        const result = (await tx.execute(sql`select current_setting('synchronous_commit') as value`)) as unknown as {
          rows: Array<{ value: string }>;
        };
        return result.rows[0]!.value;
      },
      { deferFlush },
    );

  it('sets synchronous_commit off for that transaction only', async () => {
    expect(await setting(false)).toBe('on');
    expect(await setting(true)).toBe('off');
    // Local to the transaction: the next one on the same connection is flushed again.
    expect(await setting(false)).toBe('on');
  });

  async function deferredOf(fn: () => Promise<unknown>): Promise<boolean[]> {
    scopes.length = 0;
    await fn();
    return scopes.map((s) => s.role === 'tenant' && s.deferFlush === true);
  }

  it('defers exactly the step bookkeeping', async () => {
    const { stores } = h;
    const now = scene.t0;
    let fencingToken = 0;
    expect(
      await deferredOf(async () => {
        fencingToken = (await stores.runs.acquireLease(scene.tenantId, scene.runId, 'owner-1', 30_000, now))!.fencingToken;
      }),
    ).toEqual([true]);
    const batch = { calls: [] };
    expect(
      await deferredOf(() =>
        stores.steps.insert(scene.tenantId, { runId: scene.runId, stepNumber: 1, batch, createdAt: now, status: 'running' }),
      ),
    ).toEqual([true]);
    expect(await deferredOf(() => stores.steps.setStatus(scene.tenantId, scene.runId, 1, 'completed'))).toEqual([true]);
    expect(await deferredOf(() => stores.steps.setStatus(scene.tenantId, scene.runId, 1, 'running'))).toEqual([true]);
    expect(await deferredOf(() => stores.runs.releaseLease(scene.tenantId, { runId: scene.runId, fencingToken }))).toEqual([true]);

    // Flushed as before: a step stored PENDING, a step set back to PENDING, a run's status.
    expect(
      await deferredOf(() =>
        stores.steps.insert(scene.tenantId, { runId: scene.runId, stepNumber: 2, batch, createdAt: now, status: 'pending' }),
      ),
    ).toEqual([false]);
    expect(await deferredOf(() => stores.steps.setStatus(scene.tenantId, scene.runId, 2, 'pending'))).toEqual([false]);
    expect(await deferredOf(() => stores.runs.setStatus(scene.tenantId, scene.runId, 'failed', now, 'run.deadline_exceeded'))).toEqual([
      false,
    ]);
    expect(await deferredOf(() => stores.runs.get(scene.tenantId, scene.runId))).toEqual([false]);
  });

  // docs/adr/0049: the opening and the finish are statements, not transactions of the stores;
  // what each leaves the transaction's setting at is read in the same transaction.
  async function settingAfter(statement: ReturnType<typeof sql>): Promise<string> {
    return database.transaction({ role: 'owner' }, async (tx) => {
      await tx.execute(statement);
      const result = (await tx.execute(sql`select current_setting('synchronous_commit') as value`)) as unknown as {
        rows: Array<{ value: string }>;
      };
      return result.rows[0]!.value;
    });
  }

  it("defers the step's opening and its finish, unless the finish fails the run", async () => {
    const fresh = await newScene(h);
    const at = fresh.t0.toISOString();
    const until = new Date(fresh.t0.getTime() + 30_000).toISOString();
    const batch = JSON.stringify({ calls: [] });
    expect(
      await settingAfter(
        sql`select veetbot_open_step(${fresh.tenantId}, ${fresh.runId}::uuid, 1, ${batch}::jsonb, ${at}::timestamptz, 'owner-2', ${until}::timestamptz, ${at}::timestamptz, null, null)`,
      ),
    ).toBe('off');
    const token = (await h.stores.runs.get(fresh.tenantId, fresh.runId))!.fencingToken;
    expect(
      await settingAfter(
        sql`select veetbot_finish_step(${fresh.tenantId}, ${fresh.runId}::uuid, 1, ${token}, '{}'::text[], '{}'::text[], null, ${at}::timestamptz, null, null)`,
      ),
    ).toBe('off');
    // A run's failure is flushed, as runs.setStatus's is.
    expect(
      await settingAfter(
        sql`select veetbot_finish_step(${fresh.tenantId}, ${fresh.runId}::uuid, 1, ${token}, '{}'::text[], '{}'::text[], 'tool.loop_detected', ${at}::timestamptz, null, null)`,
      ),
    ).toBe('on');
  });
});
