/** What run.ts learned once, before the suites: whether the PostgreSQL parts can run. */
export type PostgresTarget =
  | { readonly reachable: true; readonly server: string; readonly version: string }
  | { readonly reachable: false; readonly server: string; readonly reason: string };

export interface BenchContext {
  readonly postgres: PostgresTarget;
}

export function skippedLine(target: Extract<PostgresTarget, { reachable: false }>, what: string): string {
  return `SKIPPED ${what}: PostgreSQL at ${target.server} is unreachable (${target.reason})`;
}
