import pg from 'pg';
import type { BenchContext } from './bench-context';
import { postgresCpuSnapshot, postgresCpuSpent } from './postgres-cpu';

/**
 * PostgreSQL's time by statement, from pg_stat_statements on the bench's own cluster
 * (docs/adr/0072: loaded with `track = all`, so a statement run inside a PL/pgSQL function is a
 * row of its own with `toplevel = false`). A scene resets the counters before each of its
 * measured windows and adds up what its own databases ran; the top-level rows (a function call
 * counts the statements inside it) sum to the scene's execution time, the inner rows break the
 * functions down. Execution time is the executor's wall time (lock waits included); the commit's
 * flush is not in it.
 */
export interface StatementRow {
  readonly toplevel: boolean;
  /** Normalised by pg_stat_statements ($1, $2 … for constants). */
  readonly query: string;
  readonly calls: number;
  /** Total execution time, ms. */
  readonly execMs: number;
}

export interface StatementStats {
  /** `pg_stat_statements_reset()`: every database's counters to zero. */
  reset(): Promise<void>;
  /** The rows of statements run in these databases since the last reset. */
  read(databases: readonly string[]): Promise<StatementRow[]>;
  close(): Promise<void>;
}

/**
 * Only on the bench's own cluster: resetting an external server's counters would wipe what its
 * operator collects, and there the extension is usually not loaded.
 */
export async function openStatementStats(context: BenchContext): Promise<StatementStats | null> {
  if (context.cluster === undefined) return null;
  const client = new pg.Client({ connectionString: context.cluster.statsUrl });
  await client.connect();
  return {
    async reset() {
      await client.query('select pg_stat_statements_reset()');
    },
    async read(databases) {
      const result = await client.query<{ toplevel: boolean; query: string; calls: string; exec_ms: number }>(
        `select s.toplevel, s.query, s.calls::text as calls, s.total_exec_time as exec_ms
           from pg_stat_statements s join pg_database d on d.oid = s.dbid
          where d.datname = any($1::text[])`,
        [databases],
      );
      return result.rows.map((r) => ({ toplevel: r.toplevel, query: r.query, calls: Number(r.calls), execMs: Number(r.exec_ms) }));
    },
    close: () => client.end(),
  };
}

/** What one scene (one side of a comparison) cost PostgreSQL, over all its measured windows. */
export interface SceneCost {
  readonly title: string;
  /** Operations (steps, workflows) the windows completed. */
  readonly ops: number;
  /** PostgreSQL CPU over the windows (/proc), ms; null where unreadable. */
  readonly cpuMs: number | null;
  /** Empty when pg_stat_statements was not available. */
  readonly rows: readonly StatementRow[];
}

/** Adds up a scene's windows: rows by (level, statement), operations and CPU. */
export class SceneTally {
  private readonly rows = new Map<string, { toplevel: boolean; query: string; calls: number; execMs: number }>();
  private ops = 0;
  private cpuMs: number | null = 0;

  constructor(readonly title: string) {}

  add(window: { ops: number; cpuMs: number | null; rows: readonly StatementRow[] }): void {
    this.ops += window.ops;
    this.cpuMs = this.cpuMs === null || window.cpuMs === null ? null : this.cpuMs + window.cpuMs;
    for (const row of window.rows) {
      const key = `${row.toplevel ? 'top' : 'inner'}\u0000${row.query}`;
      const held = this.rows.get(key);
      if (held === undefined) this.rows.set(key, { ...row });
      else {
        held.calls += row.calls;
        held.execMs += row.execMs;
      }
    }
  }

  cost(): SceneCost {
    return { title: this.title, ops: this.ops, cpuMs: this.cpuMs, rows: [...this.rows.values()].sort((a, b) => b.execMs - a.execMs) };
  }
}

/**
 * One measured window of a scene: the counters reset, `work` run (it returns how many
 * operations it completed), then the CPU and the rows of `databases` added to the tally.
 */
export async function measureWindow(
  context: BenchContext,
  stats: StatementStats | null,
  tally: SceneTally,
  databases: readonly string[],
  work: () => Promise<number>,
): Promise<void> {
  await stats?.reset();
  const before = await postgresCpuSnapshot(context);
  const ops = await work();
  const cpuMs = postgresCpuSpent(before, await postgresCpuSnapshot(context));
  tally.add({ ops, cpuMs, rows: stats === null ? [] : await stats.read(databases) });
}

/** PostgreSQL CPU per operation, ms (NaN when unreadable or nothing ran). */
export function cpuPerOp(cost: SceneCost): number {
  return cost.cpuMs === null || cost.ops === 0 ? Number.NaN : cost.cpuMs / cost.ops;
}

/** Execution time per operation of the top-level statements (the whole of it), ms. */
export function topLevelMsPerOp(cost: SceneCost): number {
  if (cost.ops === 0) return Number.NaN;
  return cost.rows.filter((r) => r.toplevel).reduce((sum, r) => sum + r.execMs, 0) / cost.ops;
}

/** One line of SQL, at most `max` characters. */
export function shortQuery(query: string, max = 110): string {
  const flat = query.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

const TOP_ROWS = 8;
const INNER_ROWS = 12;

function pick(cost: SceneCost): { top: StatementRow[]; inner: StatementRow[] } {
  return {
    top: cost.rows.filter((r) => r.toplevel).slice(0, TOP_ROWS),
    inner: cost.rows.filter((r) => !r.toplevel).slice(0, INNER_ROWS),
  };
}

function perOp(value: number, ops: number, digits = 3): string {
  return (value / ops).toFixed(digits);
}

/** The scene's summary and its heaviest rows, as printed lines. */
export function statementLines(cost: SceneCost): string[] {
  const cpu = Number.isNaN(cpuPerOp(cost)) ? 'unknown' : `${cpuPerOp(cost).toFixed(2)} ms`;
  const head = `PostgreSQL per op, ${cost.title} (${cost.ops} ops): CPU ${cpu} (/proc)`;
  if (cost.rows.length === 0) return [`${head}; statement table not measured (pg_stat_statements needs the bench's own cluster)`];
  const { top, inner } = pick(cost);
  const line = (r: StatementRow) =>
    `  ${r.toplevel ? 'top  ' : 'inner'} ${perOp(r.execMs, cost.ops)} ms ${perOp(r.calls, cost.ops, 2).padStart(6)} calls  ${shortQuery(r.query)}`;
  return [
    `${head}, statements executing ${topLevelMsPerOp(cost).toFixed(2)} ms (pg_stat_statements; ms and calls per op)`,
    ...top.map(line),
    ...inner.map(line),
  ];
}

/** The doc's section: a summary row per scene, then each scene's heaviest rows (docs/benchmarks.md). */
export function statementTablesMarkdown(costs: readonly SceneCost[]): string {
  if (costs.length === 0) return '';
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  const out = [
    '## PostgreSQL time by function and inner statement',
    '',
    "Generated by this run on the bench's own cluster (docs/adr/0072): `pg_stat_statements` with",
    '`track = all`, reset before each measured window, summed over the windows of each scene. A',
    'top-level row is a statement the client sent (a function call includes the statements inside',
    'it); an inner row is a statement run inside a PL/pgSQL function. Milliseconds of execution',
    '(the executor, lock waits included; the commit flush is not a statement) and calls, per',
    "operation. CPU is the cluster processes' CPU from `/proc` over the same windows.",
    '',
    '| scene | ops | PostgreSQL CPU per op | statements executing per op |',
    '|---|---|---|---|',
    ...costs.map(
      (c) =>
        `| ${cell(c.title)} | ${c.ops} | ${Number.isNaN(cpuPerOp(c)) ? 'unknown' : `${cpuPerOp(c).toFixed(2)} ms`} | ${c.rows.length === 0 ? 'not measured' : `${topLevelMsPerOp(c).toFixed(2)} ms`} |`,
    ),
    '',
  ];
  for (const cost of costs) {
    if (cost.rows.length === 0) continue;
    const { top, inner } = pick(cost);
    out.push(`### ${cell(cost.title)}`, '', '| level | ms per op | calls per op | statement |', '|---|---|---|---|');
    for (const r of [...top, ...inner])
      out.push(
        `| ${r.toplevel ? 'top' : 'inner'} | ${perOp(r.execMs, cost.ops)} | ${perOp(r.calls, cost.ops, 2)} | \`${cell(shortQuery(r.query, 160)).replace(/`/g, "'")}\` |`,
      );
    out.push('');
  }
  return out.join('\n');
}

/** The scenes this run measured, in order, for `--record` (run.ts hands them to the doc). */
const recorded: SceneCost[] = [];

export function recordSceneCost(cost: SceneCost): void {
  recorded.push(cost);
}

export function recordedSceneCosts(): readonly SceneCost[] {
  return [...recorded];
}
