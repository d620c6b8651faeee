import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, constants, lstatSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkspaceFileErrorCode, WorkspaceFileResult, WorkspaceFiles, WorkspaceHandle, WorkspaceUsage } from '@veetbot/ports';
import { systemMounts } from './bwrap-arguments';
import { type HostIdentity, handOver, hostIdentity } from './host-identity';
import { inheritedDescriptors, withDescriptorsClosed } from './inherited-descriptors';
import { compileSeccompFilter, syscallTable } from './seccomp-filter';

/** The helper program, shipped beside this package's source (plain JavaScript, run as it is). */
export const WORKSPACE_HELPER_FILE = fileURLToPath(new URL('../helper/workspace-helper.mjs', import.meta.url));
/**
 * Its source, read once by the worker and given to node as `-e`: the helper's user never opens a
 * file of ours by path (it may not be able to traverse where the product is installed).
 */
let helperSource: string | undefined;
const source = (): string => {
  helperSource ??= readFileSync(WORKSPACE_HELPER_FILE, 'utf8');
  return helperSource;
};

/** docs/adr/0058: a run's workspace is capped; these are the defaults. */
export const DEFAULT_WORKSPACE_MAXIMUM_BYTES = 256 * 1024 * 1024;
export const DEFAULT_WORKSPACE_MAXIMUM_ENTRIES = 100_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** A helper answer line larger than this ends the helper (reads are at most 4 MiB of base64). */
const MAXIMUM_ANSWER_CHARS = 16 * 1024 * 1024;
const BWRAP_CANDIDATES = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'];
const BASH = '/bin/bash';

const SECCOMP_TABLE = syscallTable();
const SECCOMP_FILTER = SECCOMP_TABLE === null ? null : compileSeccompFilter(SECCOMP_TABLE);

/**
 * How the helper is confined (docs/adr/0058): `bubblewrap` — its own mount namespace holding the
 * system folders and the workspaces folder, nothing of the data folder; `process` — a plain child
 * process (as the sandbox's host user when the worker is root), where bubblewrap is missing.
 */
export type WorkspaceHelperConfinement = 'bubblewrap' | 'process';

export interface WorkspaceFileServiceOptions {
  /** The folder every run's workspace lives under (the data folder's `workspaces/`). */
  readonly workspaceRoot: string;
  /** A root worker's sandbox host user (the same as the sandbox's); default 65534. */
  readonly hostUid?: number;
  readonly hostGid?: number;
  readonly maximumBytes?: number;
  readonly maximumEntries?: number;
  /** Default: bubblewrap when it is installed and works, else a plain process. */
  readonly confinement?: WorkspaceHelperConfinement;
  readonly bwrapPath?: string;
  /** node as the helper runs it: default this process's node when it lives under /usr, else /usr/bin/node. */
  readonly nodePath?: string;
  readonly requestTimeoutMs?: number;
}

type Answer = { ok: true; value: unknown } | { ok: false; code: WorkspaceFileErrorCode; detail: string };

interface Pending {
  readonly resolve: (answer: Answer) => void;
  readonly timer: NodeJS.Timeout;
}

const ERROR_CODES: ReadonlySet<string> = new Set<WorkspaceFileErrorCode>([
  'not_found',
  'not_a_directory',
  'is_directory',
  'not_a_file',
  'exists',
  'escape',
  'symlink_loop',
  'name_too_long',
  'permission',
  'disk_limit',
  'io',
  'unavailable',
]);

const unavailable = (detail: string): Answer => ({ ok: false, code: 'unavailable', detail });

function executable(file: string): boolean {
  try {
    return (lstatSync(file).mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/**
 * The host side's only hand into the workspaces (docs/adr/0058; issue: host code never follows a
 * path inside a tree a tenant can write). One helper process per service, started on first use
 * and again after it dies, serves every run's workspace; each request names the run's folder
 * below the workspaces folder and workspace-relative segments. The helper walks by descriptor
 * and never follows a link out of the run's workspace; it runs where the data folder does not
 * exist (bubblewrap) and, for a root worker, as the sandbox's host user, so even a wrong walk
 * could not read the secrets key or write a root-only folder.
 */
export class WorkspaceFileService {
  readonly #root: string;
  readonly #identity: HostIdentity | null;
  readonly #options: WorkspaceFileServiceOptions;
  #child: ChildProcess | null = null;
  #confinement: WorkspaceHelperConfinement | null = null;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  #stderrTail = '';

  constructor(options: WorkspaceFileServiceOptions) {
    this.#root = path.resolve(options.workspaceRoot);
    this.#options = options;
    this.#identity = hostIdentity({
      ...(options.hostUid === undefined ? {} : { uid: options.hostUid }),
      ...(options.hostGid === undefined ? {} : { gid: options.hostGid }),
    });
  }

  get maximumBytes(): number {
    return this.#options.maximumBytes ?? DEFAULT_WORKSPACE_MAXIMUM_BYTES;
  }

  /** How the running helper is confined; null before it first started. */
  get confinement(): WorkspaceHelperConfinement | null {
    return this.#confinement;
  }

  /** The operator-facing tail of the helper's stderr (why it could not start). */
  get diagnostics(): string {
    return this.#stderrTail;
  }

  /**
   * Make a new run folder the sandbox user's (docs/adr/0058): for a root worker, the run folder
   * itself is handed over (lchown: never followed, never walked) and the folders between the
   * workspaces folder and it get search permission only; everything inside is then made by the
   * helper as that user. Nothing inside the run folder is touched with the worker's authority.
   */
  prepare(folder: string): void {
    if (this.#relative(folder) === null) throw new Error('not a workspace folder of this service');
    if (this.#identity !== null) handOver(folder, this.#identity, this.#root);
  }

  /** The workspace files of one run folder (`<workspaces>/<tenant-hash>/<run-id>`). */
  forFolder(folder: string): WorkspaceFiles {
    const ws = this.#relative(folder);
    if (ws === null) throw new Error('not a workspace folder of this service');
    const call = <T>(request: Record<string, unknown>): Promise<WorkspaceFileResult<T>> =>
      this.#request({ ...request, ws }) as Promise<WorkspaceFileResult<T>>;
    return {
      stat: (segments) => call({ op: 'stat', path: segments }),
      read: async (segments, maximumBytes) => {
        const answer = await call<{ bytes: string; totalBytes: number }>({ op: 'read', path: segments, maximumBytes });
        if (!answer.ok) return answer;
        return { ok: true, value: { bytes: Buffer.from(answer.value.bytes, 'base64'), totalBytes: answer.value.totalBytes } };
      },
      sameContent: (segments, bytes) => call({ op: 'same', path: segments, data: Buffer.from(bytes).toString('base64') }),
      list: (segments, keep) => call({ op: 'list', path: segments, keep }),
      write: (segments, bytes, mode) => call({ op: 'write', path: segments, data: Buffer.from(bytes).toString('base64'), mode }),
      usage: () => call<WorkspaceUsage>({ op: 'usage' }),
    };
  }

  /** A run folder's handle (`prepare`d): what a WorkspaceProvider hands the tools. */
  handle(folder: string): WorkspaceHandle {
    this.prepare(folder);
    return { root: folder, files: this.forFolder(folder) };
  }

  /** Whether `folder` is a run's workspace below this service's workspaces folder. */
  covers(folder: string): boolean {
    return this.#relative(folder) !== null;
  }

  /** What a run folder holds against its cap (for the sandbox's disk limit). */
  usageOf(folder: string): Promise<WorkspaceFileResult<WorkspaceUsage>> {
    return this.forFolder(folder).usage();
  }

  /** Stop the helper; a later request starts a new one. */
  async close(): Promise<void> {
    const child = this.#child;
    this.#child = null;
    this.#failAll('the workspace helper was stopped');
    if (child === null || child.exitCode !== null) return;
    // Held while it ends: an idle helper is unref'ed, and a process whose last work is this
    // close must not exit with the promise unsettled.
    this.#hold(child, true);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#kill(child);
        resolve();
      }, 2_000);
      child.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      child.stdin?.end();
    });
  }

  #relative(folder: string): string | null {
    const relative = path.relative(this.#root, path.resolve(folder));
    return /^[0-9a-f]{32}\/[0-9a-f-]{36}$/.test(relative) ? relative : null;
  }

  #request(request: Record<string, unknown>): Promise<Answer> {
    const child = this.#ensure();
    if (child === null) return Promise.resolve(unavailable('the workspace helper could not start'));
    const id = this.#nextId++;
    return new Promise<Answer>((resolve) => {
      const timer = setTimeout(() => {
        // A helper that does not answer is ended: every call waiting on it fails, the next starts a new one.
        this.#pending.delete(id);
        resolve(unavailable('the workspace helper did not answer in time'));
        this.#kill(child);
      }, this.#options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
      timer.unref();
      this.#pending.set(id, { resolve, timer });
      this.#hold(child, true);
      child.stdin?.write(`${JSON.stringify({ ...request, id })}\n`);
    });
  }

  /**
   * An idle helper holds no reference on the event loop (a CLI or test process ends without
   * closing it; the helper ends when its stdin does); a waiting request does.
   */
  #hold(child: ChildProcess, held: boolean): void {
    const streams = [child.stdout, child.stdin, child.stderr] as unknown as ({ ref?: () => void; unref?: () => void } | null)[];
    if (held) {
      child.ref();
      for (const stream of streams) stream?.ref?.();
    } else {
      child.unref();
      for (const stream of streams) stream?.unref?.();
    }
  }

  #failAll(detail: string): void {
    for (const [id, pending] of this.#pending) {
      clearTimeout(pending.timer);
      pending.resolve(unavailable(detail));
      this.#pending.delete(id);
    }
  }

  #kill(child: ChildProcess): void {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  #bwrap(): string | undefined {
    if (this.#options.bwrapPath !== undefined) return executable(this.#options.bwrapPath) ? this.#options.bwrapPath : undefined;
    return BWRAP_CANDIDATES.find(executable);
  }

  #ensure(): ChildProcess | null {
    if (this.#child !== null && this.#child.exitCode === null && this.#child.signalCode === null) return this.#child;
    const wanted = this.#options.confinement ?? (process.platform === 'linux' && this.#bwrap() !== undefined ? 'bubblewrap' : 'process');
    let child: ChildProcess;
    try {
      child = wanted === 'bubblewrap' ? this.#spawnConfined() : this.#spawnProcess();
    } catch (error) {
      this.#stderrTail = `the workspace helper could not start: ${String(error)}`;
      return null;
    }
    this.#confinement = wanted;
    this.#child = child;
    this.#listen(child);
    return child;
  }

  #args(root: string | { fd: number }, nodePath: string): string[] {
    return [
      nodePath,
      '--input-type=module',
      '-e',
      source(),
      '--',
      ...(typeof root === 'string' ? ['--root', root] : ['--root-fd', String(root.fd)]),
      '--host-root',
      this.#root,
      '--maximum-bytes',
      String(this.maximumBytes),
      '--maximum-entries',
      String(this.#options.maximumEntries ?? DEFAULT_WORKSPACE_MAXIMUM_ENTRIES),
    ];
  }

  #nodePath(): string {
    return this.#options.nodePath ?? (process.execPath.startsWith('/usr/') ? process.execPath : '/usr/bin/node');
  }

  /** A plain child process: the fallback where bubblewrap is missing (docs/adr/0058 says what is lost). */
  #spawnProcess(): ChildProcess {
    // The workspaces folder by descriptor: the sandbox's host user may not traverse the data folder.
    const workspacesFd = openSync(this.#root, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      const [command, ...args] = this.#args({ fd: 3 }, process.execPath);
      return spawn(command as string, args, {
        stdio: ['pipe', 'pipe', 'pipe', workspacesFd],
        env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' },
        detached: true,
        cwd: '/',
        ...(this.#identity === null ? {} : { uid: this.#identity.uid, gid: this.#identity.gid }),
      });
    } finally {
      closeSync(workspacesFd);
    }
  }

  /**
   * The helper in bubblewrap: every namespace, the system folders read-only, NOTHING of the data
   * folder mounted. The workspaces folder reaches it only as an inherited descriptor (fd 3),
   * opened here by the worker: bwrap never resolves a data-folder path as the sandbox user, and
   * the helper's mount table names no host folder. No network; the sandbox's seccomp filter.
   */
  #spawnConfined(): ChildProcess {
    const bwrap = this.#bwrap();
    if (bwrap === undefined) throw new Error('bubblewrap is not installed');
    const workspacesFd = openSync(this.#root, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      const pipes: (string | number)[] = ['pipe', 'pipe', 'pipe', workspacesFd];
      const seccompFd = SECCOMP_FILTER === null ? undefined : pipes.push('pipe') - 1;
      const args = [
        '--unshare-all',
        '--die-with-parent',
        '--new-session',
        '--uid',
        '1000',
        '--gid',
        '1000',
        ...systemMounts(),
        '--proc',
        '/proc',
        '--dev',
        '/dev',
        '--remount-ro',
        '/',
        '--chdir',
        '/',
        '--clearenv',
        '--setenv',
        'PATH',
        '/usr/bin:/bin',
        '--setenv',
        'LANG',
        'C.UTF-8',
        ...(seccompFd === undefined ? [] : ['--seccomp', String(seccompFd)]),
        '--',
        ...this.#args({ fd: 3 }, this.#nodePath()),
      ];
      const leaked = inheritedDescriptors().filter((fd) => fd >= pipes.length);
      const [command, commandArgs] = withDescriptorsClosed(bwrap, args, leaked, BASH);
      const child = spawn(command, commandArgs, {
        stdio: pipes as ('pipe' | number)[],
        env: {},
        detached: true,
        ...(this.#identity === null ? {} : { uid: this.#identity.uid, gid: this.#identity.gid }),
      });
      if (seccompFd !== undefined && SECCOMP_FILTER !== null) {
        const filterPipe = child.stdio[seccompFd] as NodeJS.WritableStream | null | undefined;
        filterPipe?.on('error', () => undefined);
        filterPipe?.end(SECCOMP_FILTER);
      }
      return child;
    } finally {
      // The child holds its own copy; ours is not needed past the spawn.
      closeSync(workspacesFd);
    }
  }

  #listen(child: ChildProcess): void {
    let buffer = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.length > MAXIMUM_ANSWER_CHARS && !buffer.includes('\n')) {
        this.#kill(child);
        return;
      }
      for (let newline = buffer.indexOf('\n'); newline !== -1; newline = buffer.indexOf('\n')) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        this.#settle(line);
      }
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.#stderrTail = (this.#stderrTail + chunk).slice(-4096);
    });
    child.stdin?.on('error', () => undefined);
    child.on('error', (error) => {
      this.#stderrTail = `the workspace helper could not start: ${error.message}`;
    });
    child.on('close', () => {
      if (this.#child === child) this.#child = null;
      this.#failAll('the workspace helper ended');
    });
  }

  #settle(line: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return;
    }
    if (parsed === null || typeof parsed !== 'object') return;
    const { id, ok, value, code, detail } = parsed as { id?: unknown; ok?: unknown; value?: unknown; code?: unknown; detail?: unknown };
    if (typeof id !== 'number') return;
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    if (this.#pending.size === 0 && this.#child !== null) this.#hold(this.#child, false);
    if (ok === true) pending.resolve({ ok: true, value });
    else
      pending.resolve({
        ok: false,
        code: typeof code === 'string' && ERROR_CODES.has(code) ? (code as WorkspaceFileErrorCode) : 'io',
        detail: typeof detail === 'string' ? detail.slice(0, 200) : 'the workspace helper failed',
      });
  }
}
