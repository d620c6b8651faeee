import type { Database } from '@veetbot/store-postgres';

/**
 * The floor of the Performance section: the same number of bare single-row commits
 * the governed call makes, through the same pool. Commit 1 inserts a row, each later commit
 * updates that row by primary key — one autocommitted statement each, so one round trip and
 * one WAL flush per commit, with no role switch, tenant setting, fence, event or validation.
 * On PostgreSQL the statements go through the store's own pg Pool (`database.native.pool`);
 * on PGlite through its one connection under the store's mutex, as every store call does.
 */
export const FLOOR_TABLE = 'bench_commit_floor';

export interface CommitFloor {
  /** One floor call: `commits` single-row commits, in order. */
  call(): Promise<void>;
  readonly commits: number;
}

export async function openCommitFloor(database: Database, commits: number): Promise<CommitFloor> {
  if (!(commits >= 1)) throw new RangeError('the floor needs at least one commit');
  const query = queryOf(database);
  await query(
    `CREATE TABLE IF NOT EXISTS ${FLOOR_TABLE} (id uuid PRIMARY KEY, status text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())`,
  );
  const insert = `INSERT INTO ${FLOOR_TABLE} (id, status) VALUES ($1, 'authorized')`;
  const update = `UPDATE ${FLOOR_TABLE} SET status = $2, updated_at = now() WHERE id = $1`;
  const states = ['running', 'running', 'succeeded'];
  return {
    commits,
    async call(): Promise<void> {
      const id = globalThis.crypto.randomUUID();
      await query(insert, [id]);
      for (let i = 1; i < commits; i++) await query(update, [id, states[Math.min(i - 1, states.length - 1)]!]);
    },
  };
}

function queryOf(database: Database): (text: string, params?: unknown[]) => Promise<unknown> {
  const native = database.native;
  if (native.driver === 'postgres') return (text, params) => native.pool.query(text, params);
  return (text, params) => database.exclusive(() => native.client.query(text, params));
}
