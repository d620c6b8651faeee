import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBenchCluster, type BenchCluster } from '../bin/bench-cluster';
import type { BenchContext } from '../src/bench-context';
import { postgresCpuSnapshot } from '../src/postgres-cpu';
import {
  cpuPerOp,
  measureWindow,
  openStatementStats,
  SceneTally,
  type StatementRow,
  statementLines,
  statementTablesMarkdown,
  topLevelMsPerOp,
} from '../src/statement-stats';

/**
 * Issue 27 (docs/adr/0072): the bench's own cluster loads pg_stat_statements with track = all,
 * so a statement inside a PL/pgSQL function is a row of its own, and its CPU is read from the
 * postmaster's children only. A real cluster, started and removed here (a few seconds).
 */
describe("the bench's own cluster", () => {
  let own: BenchCluster;
  let client: pg.Client;
  let context: BenchContext;

  beforeAll(async () => {
    own = await startBenchCluster();
    client = new pg.Client({ connectionString: own.cluster.url('postgres') });
    await client.connect();
    await client.query('create database scene_a');
    await client.query('create database scene_b');
    context = { postgres: { reachable: true, server: own.cluster.url(), version: 'test' }, cluster: own.owned };
  });

  afterAll(async () => {
    await client?.end();
    await own?.remove();
  });

  it('measures the statements inside a function, per scene database, reset per window', async () => {
    const a = new pg.Client({ connectionString: own.cluster.url('scene_a') });
    const b = new pg.Client({ connectionString: own.cluster.url('scene_b') });
    await a.connect();
    await b.connect();
    try {
      await a.query(`create table t (n int);
        create function bump(k int) returns bigint language plpgsql as $$
        begin
          insert into t values (k);
          return (select sum(g) from generate_series(1, 200000) g);
        end $$`);
      await b.query('create table u (n int)');
      const stats = await openStatementStats(context);
      expect(stats).not.toBeNull();
      const tally = new SceneTally('function scene');
      try {
        for (let window = 0; window < 2; window++) {
          // Before the reset: must not be counted.
          await a.query('select 1 as before_reset');
          await measureWindow(context, stats, tally, ['scene_a'], async () => {
            for (let i = 0; i < 5; i++) await a.query('select bump($1)', [i]);
            // Another database's statements stay out of this scene.
            await b.query('insert into u values (1)');
            return 5;
          });
        }
      } finally {
        await stats?.close();
      }
      const cost = tally.cost();
      expect(cost.ops).toBe(10);
      // A statement may be more than one row (PL/pgSQL's first run and its cached plan): add them up.
      const total = (match: (r: StatementRow) => boolean) =>
        cost.rows.filter(match).reduce((t, r) => ({ calls: t.calls + r.calls, execMs: t.execMs + r.execMs }), { calls: 0, execMs: 0 });
      const top = total((r) => r.toplevel && r.query.includes('bump'));
      const insert = total((r) => !r.toplevel && r.query.startsWith('insert into t'));
      const sum = total((r) => !r.toplevel && r.query.includes('generate_series'));
      expect(top.calls).toBe(10);
      expect(insert.calls).toBe(10);
      expect(sum.calls).toBeGreaterThanOrEqual(5);
      // The function's time includes what runs inside it.
      expect(top.execMs).toBeGreaterThanOrEqual(sum.execMs);
      expect(cost.rows.some((r) => r.query.includes('before_reset'))).toBe(false);
      expect(cost.rows.some((r) => r.query.includes('into u'))).toBe(false);
      expect(topLevelMsPerOp(cost)).toBeGreaterThan(0);
      // Ten sums of 200,000 rows: tens of ms of server CPU, visible at /proc's 10 ms ticks.
      expect(cpuPerOp(cost)).toBeGreaterThan(0);
      const lines = statementLines(cost);
      expect(lines[0]).toMatch(/^PostgreSQL per op, function scene \(10 ops\): CPU \d+\.\d\d ms/);
      expect(lines.some((l) => /^ {2}inner \d+\.\d{3} ms {3}1\.00 calls {2}insert into t/.test(l))).toBe(true);
      const markdown = statementTablesMarkdown([cost]);
      expect(markdown).toContain('| function scene | 10 |');
      expect(markdown).toMatch(/\| inner \| \d+\.\d{3} \| 1\.00 \| `insert into t values \(/);
    } finally {
      await a.end();
      await b.end();
    }
  });

  it("reads the CPU of this cluster's processes only", async () => {
    const snapshot = await postgresCpuSnapshot(context);
    expect(snapshot).not.toBeNull();
    const pids = [...snapshot!.keys()];
    expect(pids).toContain(String(own.owned.postmasterPid));
    // Backends and the auxiliary processes: all children of this postmaster.
    expect(pids.length).toBeGreaterThan(3);
    for (const pid of pids) {
      if (pid === String(own.owned.postmasterPid)) continue;
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      expect(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]).toBe(String(own.owned.postmasterPid));
    }
  });

  it('is removed: the server stopped and its folder gone', async () => {
    const extra = await startBenchCluster();
    const folder = extra.cluster.folder;
    expect(existsSync(folder)).toBe(true);
    await extra.remove();
    expect(existsSync(folder)).toBe(false);
    // The postmaster is gone (or a zombie its reaper has not collected yet).
    const stat = await readFile(`/proc/${extra.owned.postmasterPid}/stat`, 'utf8').catch(() => null);
    expect(stat === null || stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')).toBe(true);
    await extra.remove();
  });
});
