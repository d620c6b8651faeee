import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, openDatabase, type Database } from '@veetbot/store-postgres';
import { openCommitFloor, FLOOR_TABLE } from '../src/commit-floor';
import { measureCallCost } from '../src/commit-counter';
import { openGovernedScene, type GovernedScene } from '../src/governed-scene';

/** On PGlite in memory: what the PostgreSQL benchmarks rely on, without a server. */
describe('the floor and the commit count', () => {
  let database: Database;
  let scene: GovernedScene;

  beforeAll(async () => {
    database = await openDatabase({ dataDir: 'memory://' });
    await migrate(database);
    scene = await openGovernedScene(database, { callers: 2 });
  });
  afterAll(async () => {
    await scene.close();
    await database.close();
  });

  it('counts one commit per store transaction and restores the handle afterwards', async () => {
    const cost = await measureCallCost(database, 3, async () => {
      await database.transaction({ role: 'owner' }, async () => undefined);
      await database.transaction({ role: 'owner' }, async () => undefined);
    });
    expect(cost.commits).toBe(2);
    expect(cost.statements).toBeNull();
    expect(Object.hasOwn(database, 'transaction')).toBe(false);
  });

  it('the governed call commits four times: intent, claim, watermark, result (§ The pipeline, § The effect watermark)', async () => {
    const cost = await measureCallCost(database, 3, () => scene.call(0));
    expect(cost.commits).toBe(4);
  });

  it("every governed call is a new, succeeded invocation on its caller's run (nothing dedups)", async () => {
    const before = scene.calls;
    await scene.call(0);
    await scene.call(1);
    await scene.call(1);
    expect(scene.calls).toBe(before + 3);
    const rows = await database.exclusive(async () => {
      const native = database.native;
      if (native.driver !== 'pglite') throw new Error('expected PGlite');
      const result = await native.client.query<{ run_id: string; n: number; keys: number }>(
        `select run_id, count(*)::int as n, count(distinct idempotency_key)::int as keys from tool_invocations where status = 'succeeded' group by run_id order by n desc`,
      );
      return result.rows;
    });
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.keys).toBe(row.n);
    expect(rows.reduce((sum, row) => sum + row.n, 0)).toBe(scene.calls);
  });

  it('the floor makes exactly its number of single-row commits: one row inserted, updated to the end state', async () => {
    const floor = await openCommitFloor(database, 4);
    await floor.call();
    await floor.call();
    const rows = await database.exclusive(async () => {
      const native = database.native;
      if (native.driver !== 'pglite') throw new Error('expected PGlite');
      return (await native.client.query<{ status: string }>(`select status from ${FLOOR_TABLE}`)).rows;
    });
    expect(rows.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
    await expect(openCommitFloor(database, 0)).rejects.toThrow(RangeError);
  });
});
