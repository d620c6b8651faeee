/** What run.ts learned once, before the suites: whether the PostgreSQL parts can run. */
export type PostgresTarget =
  | { readonly reachable: true; readonly server: string; readonly version: string }
  | { readonly reachable: false; readonly server: string; readonly reason: string };

/** The bench's own throwaway cluster (docs/adr/0072), when it runs on one. */
export interface OwnedCluster {
  /** The postmaster: its children are exactly this server's processes (CPU from /proc). */
  readonly postmasterPid: number;
  /** The database that holds the pg_stat_statements extension (the cluster's `postgres`). */
  readonly statsUrl: string;
}

export interface BenchContext {
  readonly postgres: PostgresTarget;
  /** Absent on an external server (BENCH_POSTGRES=external): no statement table, CPU by process name. */
  readonly cluster?: OwnedCluster;
}

export function skippedLine(target: Extract<PostgresTarget, { reachable: false }>, what: string): string {
  return `SKIPPED ${what}: PostgreSQL at ${target.server} is unreachable (${target.reason})`;
}
