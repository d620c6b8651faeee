import { performance } from 'node:perf_hooks';
import type { BenchContext } from './bench-context';
import type { BenchRecord, MachineFacts } from './benchmarks-doc';
import { targetsIn, unmeasuredLine, type GoalName } from './targets';

export interface Suite {
  /** Short name for the command line: `pnpm bench <key>`. */
  readonly key: string;
  readonly title: string;
  /** The issue's goals this suite prints a `target` line for. */
  readonly goals: readonly GoalName[];
  readonly run: (context: BenchContext) => Promise<string[]>;
}

export interface BenchArgs {
  /** `--record`: write docs/benchmarks.md from this run (otherwise the tree is left alone). */
  readonly record: boolean;
  /** Suite keys or goal names; empty = every suite. */
  readonly filters: readonly string[];
}

export class BenchUsageError extends Error {
  override readonly name = 'BenchUsageError';
}

export function parseBenchArgs(argv: readonly string[], suites: readonly Suite[]): BenchArgs {
  let record = false;
  const filters: string[] = [];
  const known = new Set(suites.flatMap((s) => [s.key, ...s.goals]));
  for (const arg of argv) {
    if (arg === '--') continue;
    if (arg === '--record') record = true;
    else if (arg.startsWith('-')) throw new BenchUsageError(`unknown option ${arg} (only --record)`);
    else if (!known.has(arg)) throw new BenchUsageError(`unknown benchmark ${arg}; one of: ${[...known].sort().join(', ')}`);
    else filters.push(arg);
  }
  return { record, filters };
}

export function selectSuites(suites: readonly Suite[], filters: readonly string[]): Suite[] {
  if (filters.length === 0) return [...suites];
  return suites.filter((s) => filters.includes(s.key) || s.goals.some((g) => filters.includes(g)));
}

export interface BenchRunOptions {
  readonly argv: readonly string[];
  readonly suites: readonly Suite[];
  readonly context: BenchContext;
  readonly header: readonly string[];
  readonly record: Omit<BenchRecord, 'suites' | 'seconds' | 'loadAtEnd' | 'command'> & { readonly machine: MachineFacts };
  readonly command: string;
  readonly loadAverage: () => string;
  readonly writeDoc: (record: BenchRecord) => Promise<string>;
  readonly log: (line: string) => void;
}

/**
 * Run the selected suites in order, each suite's lines printed as they come. Every goal of a
 * suite that ran gets exactly one `target` line: the suite's own, or — when it failed or
 * skipped before measuring — an "not measured … NOT met" line. Returns whether every suite ran.
 */
export async function runBench(options: BenchRunOptions): Promise<{ ok: boolean; written: string | null }> {
  const args = parseBenchArgs(options.argv, options.suites);
  const started = performance.now();
  for (const line of options.header) options.log(line);
  let ok = true;
  const results: Array<{ name: string; lines: string[] }> = [];
  for (const suite of selectSuites(options.suites, args.filters)) {
    options.log(`\n## ${suite.title}`);
    let lines: string[];
    let why = 'the benchmark printed no figure for it';
    try {
      lines = await suite.run(options.context);
      if (lines.some((l) => l.startsWith('SKIPPED'))) why = 'the benchmark was skipped';
    } catch (error) {
      // One suite failing must not hide the others' figures; the failure is a printed result.
      lines = [`FAILED: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`];
      why = 'the benchmark failed';
      ok = false;
    }
    const printed = targetsIn(lines);
    for (const goal of suite.goals) if (!printed.has(goal)) lines.push(unmeasuredLine(goal, why));
    for (const line of lines) options.log(line);
    results.push({ name: suite.title, lines });
  }
  const seconds = (performance.now() - started) / 1000;
  if (!args.record) {
    options.log(`\n${seconds.toFixed(0)} s; docs/benchmarks.md left alone (pnpm bench --record writes it)`);
    return { ok, written: null };
  }
  const written = await options.writeDoc({
    ...options.record,
    seconds,
    command: `${options.command}${args.filters.length === 0 ? '' : ` ${args.filters.join(' ')}`} --record`,
    loadAtEnd: options.loadAverage(),
    suites: results,
  });
  options.log(`\n${seconds.toFixed(0)} s; results written to ${written}`);
  return { ok, written };
}
