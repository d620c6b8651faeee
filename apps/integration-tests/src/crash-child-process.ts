import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Database } from '@veetbot/store-postgres';
import { CHILD_SETUP_ENV, type ChildMessage, type ChildSetup, type CrashJob } from './crash-job';
import { TSX_LOADER_URL } from './mcp-servers';

/**
 * Real child processes for the crash suites: start src/crash-child.ts, hand it a job, read its
 * JSON lines, kill, pause and continue it by pid, and see how it ended (exit code or signal).
 *
 * Startup cost decides how long a 64-process matrix takes on a loaded two-core machine: under
 * `node --import tsx` every child transpiles and resolves a few hundred modules (about 2.3 s of
 * CPU each, measured); the same file bundled once per test run by esbuild (the transpiler tsx
 * itself uses) starts in about 0.4 s of CPU. The bundle is built from the current sources at
 * the start of each test file, so it never runs stale code; VEETBOT_CRASH_CHILD=tsx runs the
 * source file under tsx instead. A pool keeps one child warm (modules loaded, waiting for its
 * job on stdin), so the next case's startup overlaps the current case's recovery.
 */

export const CRASH_CHILD_SOURCE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'crash-child.ts');

export interface ChildCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** Removes what building it left behind. */
  dispose(): Promise<void>;
}

/** How to start a crash child: the esbuild bundle (default) or the source under tsx. */
export async function crashChildCommand(): Promise<ChildCommand> {
  if (process.env.VEETBOT_CRASH_CHILD === 'tsx') {
    return { command: process.execPath, args: ['--import', TSX_LOADER_URL, CRASH_CHILD_SOURCE], dispose: async () => undefined };
  }
  const folder = await mkdtemp(path.join(tmpdir(), 'veetbot-crash-child-'));
  const outfile = path.join(folder, 'crash-child.mjs');
  await build({
    entryPoints: [CRASH_CHILD_SOURCE],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    keepNames: true,
    logLevel: 'error',
    // CommonJS dependencies (pg) call require() for node built-ins; an ESM bundle needs one.
    banner: {
      js: "import { createRequire as __veetbotCreateRequire } from 'node:module'; const require = __veetbotCreateRequire(import.meta.url);",
    },
  });
  return { command: process.execPath, args: [outfile], dispose: () => rm(folder, { recursive: true, force: true }) };
}

export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** One crash child: its messages, its exit, and signals sent to its pid. */
export class CrashChild {
  readonly #process: ChildProcess;
  readonly #messages: ChildMessage[] = [];
  readonly #waiters = new Set<() => void>();
  #stderr = '';
  readonly exited: Promise<ChildExit>;
  #exit: ChildExit | null = null;

  constructor(command: ChildCommand, setup: ChildSetup) {
    this.#process = spawn(command.command, [...command.args], {
      // A worker of our own: it needs no secret of the test process, only a PATH and its setup.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', [CHILD_SETUP_ENV]: JSON.stringify(setup) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let buffered = '';
    this.#process.stdout!.setEncoding('utf8');
    this.#process.stdout!.on('data', (chunk: string) => {
      buffered += chunk;
      for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        try {
          this.#messages.push(JSON.parse(line) as ChildMessage);
        } catch {
          this.#stderr += `[stdout] ${line}\n`;
        }
        this.#wake();
      }
    });
    this.#process.stderr!.setEncoding('utf8');
    this.#process.stderr!.on('data', (chunk: string) => {
      if (this.#stderr.length < 16_384) this.#stderr += chunk;
    });
    // A child killed while the test writes to it: the write fails, the exit says why.
    this.#process.stdin!.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      this.#process.once('exit', (code, signal) => {
        this.#exit = { code, signal };
        resolve(this.#exit);
        this.#wake();
      });
    });
  }

  get pid(): number {
    const pid = this.#process.pid;
    if (pid === undefined) throw new Error('the crash child did not start');
    return pid;
  }

  get stderr(): string {
    return this.#stderr;
  }

  get messages(): readonly ChildMessage[] {
    return this.#messages;
  }

  #wake(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }

  /** The first message of this kind; rejects if the child exits first or `timeoutMs` passes. */
  message<E extends ChildMessage['event']>(event: E, timeoutMs = 60_000): Promise<Extract<ChildMessage, { event: E }>> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.#messages.find((m) => m.event === event);
        if (found !== undefined) {
          done();
          resolve(found as Extract<ChildMessage, { event: E }>);
          return true;
        }
        if (this.#exit !== null) {
          done();
          reject(
            new Error(`crash child ${this.#process.pid} exited (${JSON.stringify(this.#exit)}) before '${event}'. stderr: ${this.#stderr}`),
          );
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`crash child ${this.#process.pid} sent no '${event}' in ${timeoutMs} ms. stderr: ${this.#stderr}`));
      }, timeoutMs);
      const waiter = (): void => {
        check();
      };
      const done = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(waiter);
      };
      if (!check()) this.#waiters.add(waiter);
    });
  }

  /** Closes stdin: a child still waiting for its job exits on its own. */
  endInput(): void {
    this.#process.stdin!.end();
  }

  /** One line on the child's stdin (the job, `go`, `resume`). */
  send(line: string): void {
    this.#process.stdin!.write(`${line}\n`);
  }

  start(job: CrashJob): void {
    this.send(JSON.stringify(job));
  }

  /** A signal to this child's pid only. */
  signal(signal: NodeJS.Signals): void {
    if (this.#exit === null) this.#process.kill(signal);
  }

  /** Ends the child if it still runs (SIGKILL ends a stopped process too). */
  async dispose(): Promise<void> {
    if (this.#exit === null) this.#process.kill('SIGKILL');
    await this.exited;
  }
}

/** Keeps `size` children warm: composed and connected, each waiting for its job. */
export class CrashChildPool {
  readonly #command: ChildCommand;
  readonly #setup: ChildSetup;
  readonly #size: number;
  readonly #warm: CrashChild[] = [];
  readonly #all = new Set<CrashChild>();

  constructor(command: ChildCommand, setup: ChildSetup, size = 1) {
    this.#command = command;
    this.#setup = setup;
    this.#size = size;
    this.#fill();
  }

  #fill(): void {
    while (this.#warm.length < this.#size) {
      const child = new CrashChild(this.#command, this.#setup);
      this.#all.add(child);
      void child.exited.then(() => this.#all.delete(child));
      this.#warm.push(child);
    }
  }

  /** A child with `job` handed to it; a replacement starts warming at once. */
  run(job: CrashJob): CrashChild {
    const child = this.#warm.shift() ?? new CrashChild(this.#command, this.#setup);
    this.#all.add(child);
    this.#fill();
    child.start(job);
    return child;
  }

  /** Every child this pool started and that still runs, ended by its pid (a warm one by closing its stdin first). */
  async close(): Promise<void> {
    for (const child of this.#warm.splice(0)) child.endInput();
    const settled = (child: CrashChild) => Promise.race([child.exited, new Promise((resolve) => setTimeout(resolve, 2_000))]);
    await Promise.all([...this.#all].map(settled));
    await Promise.all([...this.#all].map((child) => child.dispose()));
  }
}

/** The slice of node-postgres' pool the test uses (pg itself belongs to store-postgres). */
interface RawPool {
  query<R>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

function rawPool(database: Database): RawPool {
  if (database.native.driver !== 'postgres') throw new Error('child processes need PostgreSQL');
  return database.native.pool as unknown as RawPool;
}

/**
 * SIGSTOP a child at a moment none of its connections is inside a transaction. A process
 * frozen mid-transaction would hold its row locks (the run row) for as long as it is stopped —
 * a real hazard, but not the one the fencing test is about: there the paused worker must
 * merely stop renewing its lease. pg_stat_activity says, per connection, whether one is open.
 */
export async function pauseWhenIdle(child: CrashChild, database: Database, applicationName: string): Promise<void> {
  const pool = rawPool(database);
  for (let attempt = 0; attempt < 100; attempt += 1) {
    child.signal('SIGSTOP');
    const { rows } = await pool.query<{ busy: number }>(
      "select count(*)::int as busy from pg_stat_activity where application_name = $1 and state is distinct from 'idle'",
      [applicationName],
    );
    if (rows[0]?.busy === 0) return;
    child.signal('SIGCONT');
    await new Promise((resolve) => setTimeout(resolve, 5 + Math.floor(Math.random() * 20)));
  }
  throw new Error('the child never paused outside a transaction');
}

/** The child's connections as PostgreSQL sees them (closed ones are gone). */
export async function connectionsOf(database: Database, applicationName: string): Promise<number> {
  const { rows } = await rawPool(database).query<{ n: number }>(
    'select count(*)::int as n from pg_stat_activity where application_name = $1',
    [applicationName],
  );
  return rows[0]?.n ?? 0;
}
