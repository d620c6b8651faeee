import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The official MCP conformance suite, run by the project's own tests (docs/adr/0059): both
 * protocol lines pinned exactly (package.json: two npm aliases of the same package), started
 * as real processes on Node 20 through the `node20/` shim, one process per scenario, a bounded
 * number at once. The verdict of a scenario is the suite's own (its exit status); the checks it
 * wrote are read back to say why.
 */

export const REVISIONS = ['2025-11-25', '2026-07-28'] as const;
export type Revision = (typeof REVISIONS)[number];
export type Face = 'client' | 'server';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SHIM = join(ROOT, 'node20', 'register.mjs');

/** The suite's entry for a revision: 0.1.16 is the 2025-11-25 line, 0.2.0-alpha.12 the 2026-07-28 one. */
export function suiteEntry(revision: Revision): string {
  return join(ROOT, 'node_modules', `conformance-${revision}`, 'dist', 'index.js');
}

interface Exit {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function runSuite(revision: Revision, args: readonly string[], timeoutMs: number): Promise<Exit> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', SHIM, suiteEntry(revision), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // The suite has its own per-scenario timeout; this one only stops a suite that hangs itself.
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code: code ?? -1, stdout, stderr });
    });
  });
}

/**
 * The scenarios of one face at one revision, as the suite scores them: at 2025-11-25 every
 * scenario 0.1.16 lists (its draft, extension and back-compatibility ones included); at
 * 2026-07-28 exactly what the revision requires (`--requirements`, frozen at its release), not
 * the extensions it runs but never scores.
 */
export async function listScenarios(face: Face, revision: Revision): Promise<string[]> {
  const args = revision === '2025-11-25' ? ['list', `--${face}`] : ['list', '--requirements', revision];
  const exit = await runSuite(revision, args, 60_000);
  if (exit.code !== 0) throw new Error(`conformance list failed (${exit.code}): ${exit.stderr}`);
  const heading = face === 'client' ? 'Client scenarios' : 'Server scenarios';
  const block = exit.stdout.slice(exit.stdout.indexOf(heading)).split(/\n\s*\n/)[0] ?? '';
  return [...block.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]!);
}

export interface Check {
  readonly id: string;
  readonly status: string;
  readonly errorMessage?: string;
}

export interface ScenarioResult {
  readonly face: Face;
  readonly revision: Revision;
  readonly scenario: string;
  readonly passed: boolean;
  /** The checks the suite marked FAILURE ("id: message"), or the suite's own output when it wrote none. */
  readonly failures: readonly string[];
}

export interface ScenarioTarget {
  /** client face: the command the suite runs with the scenario server's URL appended. */
  readonly command?: string;
  /** server face: the MCP endpoint under test. */
  readonly url?: string;
}

/** One scenario, one suite process; the suite's exit status is the verdict. */
export async function runScenario(
  face: Face,
  revision: Revision,
  scenario: string,
  target: ScenarioTarget,
  options: { readonly timeoutMs?: number } = {},
): Promise<ScenarioResult> {
  const out = await mkdtemp(join(tmpdir(), 'veetbot-conformance-'));
  try {
    // A client scenario may run `mcp check` twice (discover, then call), each booting its database.
    const timeoutMs = options.timeoutMs ?? (face === 'client' ? 60_000 : 30_000);
    const args = [face, '--scenario', scenario, '-o', out];
    // 0.2 runs a scenario at the wire of the revision named; 0.1.16 has one wire.
    if (revision === '2026-07-28') args.push('--spec-version', revision);
    if (face === 'client') args.push('--command', target.command ?? '', '--timeout', String(timeoutMs));
    else args.push('--url', target.url ?? '');
    if (revision === '2026-07-28' && face === 'server') args.push('--timeout', String(timeoutMs));
    const exit = await runSuite(revision, args, timeoutMs + 60_000);
    const checks = await readChecks(out);
    const failures = checks.filter((c) => c.status === 'FAILURE').map((c) => `${c.id}: ${c.errorMessage ?? ''}`.trim());
    if (exit.code !== 0 && failures.length === 0) failures.push(`suite exit ${exit.code}: ${(exit.stderr || exit.stdout).slice(-600)}`);
    return { face, revision, scenario, passed: exit.code === 0, failures };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

async function readChecks(folder: string): Promise<Check[]> {
  const checks: Check[] = [];
  for (const entry of await readdir(folder, { recursive: true })) {
    if (!String(entry).endsWith('checks.json')) continue;
    const parsed = JSON.parse(await readFile(join(folder, String(entry)), 'utf8')) as unknown;
    if (Array.isArray(parsed)) checks.push(...(parsed as Check[]));
  }
  return checks;
}

/** Runs `work` over `items`, at most `concurrency` at once, results in the items' order. */
export async function inParallel<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const at = next++;
      results[at] = await work(items[at]!);
    }
  });
  await Promise.all(lanes);
  return results;
}

/**
 * expected-failures.json: per face and revision, each scenario that still fails and the key of
 * its reason (`reasons` holds the text once). The list only shrinks: a listed scenario that
 * passes is an error until it is taken off.
 */
export interface ExpectedFailures {
  readonly reasons: Readonly<Record<string, string>>;
  readonly client: Readonly<Record<Revision, Readonly<Record<string, string>>>>;
  readonly server: Readonly<Record<Revision, Readonly<Record<string, string>>>>;
}

export async function loadExpectedFailures(): Promise<ExpectedFailures> {
  const list = JSON.parse(await readFile(join(ROOT, 'expected-failures.json'), 'utf8')) as ExpectedFailures;
  for (const face of ['client', 'server'] as const)
    for (const revision of REVISIONS)
      for (const [scenario, reason] of Object.entries(list[face][revision]))
        if (list.reasons[reason] === undefined)
          throw new Error(`expected-failures.json: ${face} ${revision} ${scenario} names no reason ${reason}`);
  return list;
}

export interface Verdict {
  /** Failed and not on the list. */
  readonly unexpected: readonly ScenarioResult[];
  /** On the list and passing: take them off. */
  readonly nowPassing: readonly string[];
  /** On the list but not a scenario the suite ran. */
  readonly unknown: readonly string[];
  readonly passed: number;
  readonly total: number;
}

/** The run against the list for one face and revision. */
export function judge(results: readonly ScenarioResult[], listed: Readonly<Record<string, string>>): Verdict {
  const ran = new Set(results.map((r) => r.scenario));
  return {
    unexpected: results.filter((r) => !r.passed && listed[r.scenario] === undefined),
    nowPassing: results.filter((r) => r.passed && listed[r.scenario] !== undefined).map((r) => r.scenario),
    unknown: Object.keys(listed).filter((s) => !ran.has(s)),
    passed: results.filter((r) => r.passed).length,
    total: results.length,
  };
}
