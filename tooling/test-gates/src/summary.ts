import { HARD_GATES } from './hard-gates';
import type { PackageManifest } from './manifest';

/** The one line that runs everything (README § Set up; what .ci/run runs). */
export const FULL_RUN_COMMAND = 'DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx -y pnpm@10.34.8 test';
export const LOCAL_POSTGRES = { host: '127.0.0.1', port: 5432 } as const;

export interface SummaryInput {
  readonly manifests: readonly PackageManifest[];
  /** process.env.DATABASE_URL as the run saw it. */
  readonly databaseUrl: string | undefined;
  /** Whether a PostgreSQL answered at LOCAL_POSTGRES (asked only when DATABASE_URL is unset). */
  readonly localPostgres: boolean;
  /** CI is set: a hard gate that did not run fails the build (§ Hard gates: "These fail the build"). */
  readonly ci: boolean;
  /** The exit status of the steps before the summary (typecheck, boundaries, the tests). */
  readonly previousStatus: number;
}

export interface LeftOut {
  /** `apps/integration-tests/test/gate-07-crash-recovery.test.ts` */
  readonly file: string;
  readonly what: string;
  readonly why: string;
  readonly hardGates: readonly number[];
  readonly onPglite: string | null;
}

export interface Summary {
  /** Every file and every gate was part of the run. */
  readonly complete: boolean;
  /** The hard gates that did not run in full, ascending. */
  readonly gatesNotRun: readonly number[];
  readonly leftOut: readonly LeftOut[];
  readonly text: string;
  readonly exitCode: number;
}

/** DATABASE_URL without its password (the summary is printed into logs). */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unparsable DATABASE_URL)';
  }
}

const WIDTH = 78;
const rule = (c: string): string => c.repeat(WIDTH);

/**
 * What the run left out and how to run it. Without DATABASE_URL every postgres-only.json file
 * was excluded by its package's vitest.config.ts (they read the same list), so the summary is
 * the lists themselves; with it, nothing was excluded.
 */
export function summarize(input: SummaryInput): Summary {
  // The same test as the vitest configs' (`process.env['DATABASE_URL'] ? [] : postgresOnly`).
  const set = Boolean(input.databaseUrl);
  const leftOut: LeftOut[] = set
    ? []
    : input.manifests.flatMap((m) =>
        m.files.map((f) => ({
          file: `${m.dir}/${f.pattern}`,
          what: f.what,
          why: f.why,
          hardGates: f.hard_gates,
          onPglite: f.on_pglite ?? null,
        })),
      );
  const gatesNotRun = [...new Set(leftOut.flatMap((l) => l.hardGates))].sort((a, b) => a - b);
  const failed = input.previousStatus !== 0;

  if (leftOut.length === 0) {
    const text = [
      '',
      rule('='),
      set
        ? `Every hard gate and every test file was part of this run (DATABASE_URL=${redactUrl(input.databaseUrl!)}).`
        : 'Every hard gate and every test file was part of this run.',
      ...(failed ? ['The run FAILED: see the output above.'] : []),
      rule('='),
    ].join('\n');
    return { complete: true, gatesNotRun, leftOut, text, exitCode: input.previousStatus };
  }

  const banner =
    gatesNotRun.length > 0
      ? `!!  HARD ${gatesNotRun.length === 1 ? 'GATE' : 'GATES'} ${gatesNotRun.length === 1 ? gatesNotRun[0] : `${gatesNotRun.slice(0, -1).join(', ')} AND ${gatesNotRun.at(-1)}`} DID NOT RUN IN FULL: DATABASE_URL is not set.`
      : '!!  NOT EVERYTHING RAN: DATABASE_URL is not set.';
  const lines: string[] = [
    '',
    rule('!'),
    banner,
    `!!  ${leftOut.length} test file pattern(s) need PostgreSQL and were left out of this run.`,
    rule('!'),
  ];
  if (gatesNotRun.length > 0) {
    lines.push('', `HARD GATES NOT RUN (specification § Hard gates: "These fail the build"):`);
    for (const gate of gatesNotRun) {
      const files = leftOut.filter((l) => l.hardGates.includes(gate));
      const partial = files.flatMap((l) => (l.onPglite === null ? [] : [l.onPglite]));
      lines.push(`  Hard gate ${gate}: ${HARD_GATES[gate] ?? '(not in the specification)'}`);
      lines.push(partial.length > 0 ? '    ran only in part without PostgreSQL; not run:' : '    NOT RUN AT ALL:');
      for (const l of files) lines.push(`      ${l.file}`, `        ${l.what}`, `        why: ${l.why}`);
      for (const p of partial) lines.push(`    what did run, on PGlite: ${p}`);
    }
  }
  const others = leftOut.filter((l) => l.hardGates.length === 0);
  if (others.length > 0) {
    lines.push('', 'ALSO NOT RUN (need PostgreSQL):');
    for (const l of others) lines.push(`  ${l.file}`, `    ${l.what}`, `    why: ${l.why}`);
  }
  lines.push('');
  lines.push(
    input.localPostgres
      ? `A PostgreSQL server answers at ${LOCAL_POSTGRES.host}:${LOCAL_POSTGRES.port}, but DATABASE_URL is not set. Run everything on it:`
      : `No PostgreSQL answers at ${LOCAL_POSTGRES.host}:${LOCAL_POSTGRES.port}. Start one (user postgres, trust auth, database test), then run everything:`,
  );
  lines.push('', `    ${FULL_RUN_COMMAND}`, '');
  if (failed) lines.push('The run also FAILED: see the output above.');
  const ciFails = input.ci && !failed;
  if (ciFails) lines.push('CI is set: a hard gate or suite that did not run fails the build.');
  lines.push(rule('!'));
  return { complete: false, gatesNotRun, leftOut, text: lines.join('\n'), exitCode: failed ? input.previousStatus : input.ci ? 1 : 0 };
}
