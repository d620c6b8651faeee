import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

/** "Where the time goes" (from profiles, kept by hand beside the suites): recorded with every run. */
export const WHERE_THE_TIME_GOES = fileURLToPath(new URL('../where-the-time-goes.md', import.meta.url));

/** The repository's docs/benchmarks.md (tooling/bench/src → ../../../docs). */
export const BENCHMARKS_DOC = fileURLToPath(new URL('../../../docs/benchmarks.md', import.meta.url));

export interface MachineFacts {
  readonly cpu: string;
  readonly cores: number;
  readonly memory: string;
  readonly node: string;
  readonly platform: string;
}

export function machineFacts(): MachineFacts {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown CPU',
    cores: cpus.length,
    memory: `${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
  };
}

export function loadAverage(): string {
  return os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(', ');
}

export interface BenchRecord {
  readonly startedAt: Date;
  readonly seconds: number;
  readonly command: string;
  readonly machine: MachineFacts;
  readonly postgres: string;
  readonly loadAtStart: string;
  readonly loadAtEnd: string;
  readonly suites: ReadonlyArray<{ readonly name: string; readonly lines: readonly string[] }>;
  /** Markdown appended after the suites (the "where the time goes" tables). */
  readonly analysis?: string;
}

/** docs/benchmarks.md: the last run's figures, verbatim, with what they were measured on. */
export function renderBenchmarksDoc(record: BenchRecord): string {
  const m = record.machine;
  const out = [
    '# Benchmarks',
    '',
    'Written by `pnpm bench --record` (tooling/bench/src/run.ts; a plain `pnpm bench` leaves it alone);',
    "the figures below are that run's output, verbatim; each goal of issue 14 is one `target` line.",
    'Every figure that has a target is a ratio against a baseline',
    'measured in the same run, in alternating rounds (median of the rounds), so load on the',
    'machine hits subject and baseline alike. Absolute calls/s depend on the machine and its',
    'load and are printed for context only. What each benchmark measures, and its baseline:',
    '[tooling/bench/README.md](../tooling/bench/README.md).',
    '',
    '| | |',
    '|---|---|',
    `| date | ${record.startedAt.toISOString()} |`,
    `| command | \`${record.command}\` |`,
    `| machine | ${m.cpu} × ${m.cores} cores, ${m.memory} memory (${m.platform}) |`,
    `| Node | ${m.node} |`,
    `| PostgreSQL | ${record.postgres} |`,
    `| load average (1, 5, 15 min) at start / end | ${record.loadAtStart} / ${record.loadAtEnd} |`,
    `| duration | ${record.seconds.toFixed(0)} s |`,
    '',
  ];
  const load = Number.parseFloat(record.loadAtStart);
  if (load > m.cores) {
    out.push(
      `**Taken under load**: the 1-minute load average was ${load.toFixed(2)} on ${m.cores} cores when the run started, so`,
      'absolute calls/s are depressed and round trips cost more than on an idle machine; read the ratios.',
      '',
    );
  }
  for (const suite of record.suites) {
    out.push(`## ${suite.name}`, '', '```', ...suite.lines, '```', '');
  }
  if (record.analysis !== undefined) out.push(record.analysis.trim(), '');
  return out.join('\n');
}

export async function writeBenchmarksDoc(record: BenchRecord): Promise<string> {
  const analysis = record.analysis ?? (await readFile(WHERE_THE_TIME_GOES, 'utf8').catch(() => undefined));
  await writeFile(BENCHMARKS_DOC, renderBenchmarksDoc(analysis === undefined ? record : { ...record, analysis }), 'utf8');
  return BENCHMARKS_DOC;
}
