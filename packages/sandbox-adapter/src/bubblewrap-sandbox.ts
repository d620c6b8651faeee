import { spawn } from 'node:child_process';
import { accessSync, chmodSync, constants as fsConstants, mkdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { Sandbox, SandboxAvailability, SandboxRequest, SandboxResult } from '@veetbot/ports';
import { BoundedCapture } from './bounded-capture';
import { bwrapArguments, GROUP, PASSWD, PRLIMIT, platformEnvironmentArgs } from './bwrap-arguments';
import { classifyEnding, splitStatus } from './ending';
import { handOver, hostIdentity, untraversable, type HostIdentity } from './host-identity';
import { inheritedDescriptors, withDescriptorsClosed } from './inherited-descriptors';
import { compileSeccompFilter, syscallTable } from './seccomp-filter';

const BWRAP_CANDIDATES = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'];
const BASH = '/bin/bash';
/** After the kill, how long to wait for the pipes to close before giving up on them. */
const KILL_GRACE_MS = 5_000;
/** The child's descriptor that carries the seccomp filter to bwrap (which closes it after reading). */
const SECCOMP_FD = 3;

const SECCOMP_TABLE = syscallTable();
/** null on an architecture without a syscall table (docs/adr/0037): no filter there. */
const SECCOMP_FILTER = SECCOMP_TABLE === null ? null : compileSeccompFilter(SECCOMP_TABLE);

export interface BubblewrapSandboxOptions {
  /** The adapter's own folder (the data folder's `sandbox/`): the synthesized /etc files, the probe. */
  readonly stateDir: string;
  /** bwrap's path; default: the first of /usr/bin, /usr/local/bin, /bin that exists. */
  readonly bwrapPath?: string;
  /**
   * The folder every workspace lives under (the data folder's `workspaces/`): a root worker
   * lets the sandbox's host user traverse the folders between it and a run's workspace.
   */
  readonly workspaceRoot?: string;
  /** A root worker's sandbox host user; default 65534 (nobody). A dedicated uid is better. */
  readonly hostUid?: number;
  readonly hostGid?: number;
}

function executable(file: string): boolean {
  try {
    accessSync(file, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const EMPTY_STREAM = { text: '', totalBytes: 0, truncated: false } as const;

/**
 * The Sandbox port over bubblewrap (docs/adr/0037; ADR-0008). Linux only. Every run gets fresh
 * namespaces, read-only system folders, the workspace as its only writable bind, a private
 * /tmp and HOME, the synthesized environment, rlimits through prlimit, and a wall clock and
 * output budget enforced here by killing the whole sandbox.
 */
export class BubblewrapSandbox implements Sandbox {
  readonly #stateDir: string;
  readonly #bwrapOption: string | undefined;
  readonly #workspaceRoot: string | undefined;
  readonly #identity: HostIdentity | null;
  #availability: Promise<SandboxAvailability> | undefined;

  constructor(options: BubblewrapSandboxOptions) {
    this.#stateDir = options.stateDir;
    this.#bwrapOption = options.bwrapPath;
    this.#workspaceRoot = options.workspaceRoot;
    this.#identity = hostIdentity({
      ...(options.hostUid === undefined ? {} : { uid: options.hostUid }),
      ...(options.hostGid === undefined ? {} : { gid: options.hostGid }),
    });
  }

  availability(): Promise<SandboxAvailability> {
    this.#availability ??= this.#probe();
    return this.#availability;
  }

  async #probe(): Promise<SandboxAvailability> {
    if (process.platform !== 'linux') return { available: false, reason: `the sandbox needs Linux (this is ${process.platform})` };
    const bwrap = this.#bwrap();
    if (bwrap === undefined) {
      return { available: false, reason: 'bubblewrap (bwrap) is not installed: apt-get install -y bubblewrap' };
    }
    if (!executable(PRLIMIT)) return { available: false, reason: `${PRLIMIT} (util-linux) is missing` };
    const blocked = this.#identity === null ? null : untraversable(this.#stateDir, this.#identity);
    if (blocked !== null) {
      return {
        available: false,
        reason: `${blocked} is not traversable by the sandbox's host user (uid ${this.#identity?.uid}); the data folder and the folders above it need o+x (chmod o+x ${blocked}: its files keep their own modes)`,
      };
    }
    const probe = path.join(this.#stateDir, 'probe');
    try {
      mkdirSync(this.#stateDir, { recursive: true, mode: 0o711 });
      // Set, not requested: the process umask (docs/adr/0054: 077) would leave it 0700, which the
      // sandbox's host user cannot search.
      chmodSync(this.#stateDir, 0o711);
      mkdirSync(probe, { recursive: true, mode: 0o700 });
    } catch (error) {
      return { available: false, reason: `the sandbox folder ${this.#stateDir} cannot be created: ${String(error)}` };
    }
    const result = await this.#execute(
      {
        argv: ['/bin/sh', '-c', 'exit 0'],
        workspaceHostPath: probe,
        limits: { wallSeconds: 10, cpuSeconds: 5, memoryBytes: 256 * 1024 * 1024, processes: 16, outputBytes: 4096 },
      },
      new AbortController().signal,
      bwrap,
    );
    if (result.ending === 'exited' && result.exitCode === 0) return { available: true };
    const why = result.detail ?? (result.stderr.text.trim() || `ending ${result.ending}, exit ${String(result.exitCode)}`);
    const who = this.#identity === null ? '' : ` as host uid ${this.#identity.uid} (the data folder must be traversable by it)`;
    return { available: false, reason: `bubblewrap cannot create a sandbox here${who}: ${why.slice(0, 500)}` };
  }

  #bwrap(): string | undefined {
    if (this.#bwrapOption !== undefined) return executable(this.#bwrapOption) ? this.#bwrapOption : undefined;
    return BWRAP_CANDIDATES.find(executable);
  }

  async run(request: SandboxRequest, signal: AbortSignal): Promise<SandboxResult> {
    const tracer = trace.getTracer('veetbot.sandbox');
    // § Spans: sandbox.execute, beneath tool.execute.
    return tracer.startActiveSpan('sandbox.execute', async (span) => {
      try {
        const availability = await this.availability();
        const result = availability.available
          ? await this.#execute(request, signal, this.#bwrap() ?? 'bwrap')
          : notStarted(availability.reason);
        span.setAttribute('veetbot.sandbox.ending', result.ending);
        if (result.exitCode !== null) span.setAttribute('veetbot.sandbox.exit_code', result.exitCode);
        span.setAttribute('veetbot.sandbox.output_bytes', result.stdout.totalBytes + result.stderr.totalBytes);
        if (result.ending !== 'exited') span.setStatus({ code: SpanStatusCode.ERROR, message: result.ending });
        return result;
      } finally {
        span.end();
      }
    });
  }

  #identityFiles(): { passwd: string; group: string } {
    const etc = path.join(this.#stateDir, 'etc');
    mkdirSync(etc, { recursive: true, mode: 0o755 });
    const passwd = path.join(etc, 'passwd');
    const group = path.join(etc, 'group');
    writeFileSync(passwd, PASSWD, { mode: 0o644 });
    writeFileSync(group, GROUP, { mode: 0o644 });
    // Set, not requested: under the process umask (docs/adr/0054: 077) the sandbox's user could
    // not read them. Nothing here is writable by anyone but this process's user.
    chmodSync(etc, 0o755);
    chmodSync(passwd, 0o644);
    chmodSync(group, 0o644);
    return { passwd, group };
  }

  #execute(request: SandboxRequest, signal: AbortSignal, bwrap: string): Promise<SandboxResult> {
    const started = performance.now();
    if (request.argv.length === 0) return Promise.resolve(notStarted('argv is empty'));
    let workspace: string;
    try {
      workspace = realpathSync(request.workspaceHostPath);
      if (!statSync(workspace).isDirectory()) return Promise.resolve(notStarted('the workspace is not a directory'));
    } catch (error) {
      return Promise.resolve(notStarted(`the workspace cannot be used: ${String(error)}`));
    }
    if (signal.aborted) return Promise.resolve({ ...notStarted('cancelled before start'), ending: 'cancelled' });
    if (this.#identity !== null) {
      try {
        handOver(workspace, this.#identity, this.#workspaceRoot);
      } catch (error) {
        return Promise.resolve(notStarted(`the workspace cannot be handed to the sandbox user: ${String(error)}`));
      }
    }
    const platformArgs = platformEnvironmentArgs(request.platformEnvironment ?? {});
    if (platformArgs !== null && 'refused' in platformArgs) return Promise.resolve(notStarted(platformArgs.refused));
    // fd 3 carries the seccomp filter when there is one; the platform environment the next one.
    const platformFd = platformArgs === null ? undefined : SECCOMP_FILTER === null ? SECCOMP_FD : SECCOMP_FD + 1;
    const identity = this.#identityFiles();
    const args = bwrapArguments({
      argv: request.argv,
      workspaceHostPath: workspace,
      limits: request.limits,
      readOnlyBinds: request.readOnlyBinds ?? [],
      passwdPath: identity.passwd,
      groupPath: identity.group,
      ...(SECCOMP_FILTER === null ? {} : { seccompFd: SECCOMP_FD }),
      ...(platformFd === undefined ? {} : { platformEnvironmentFd: platformFd }),
    });
    const pipes: ('pipe' | 'ignore')[] = ['pipe', 'pipe', 'pipe'];
    if (SECCOMP_FILTER !== null) pipes.push('pipe');
    if (platformFd !== undefined) pipes.push('pipe');
    // The filter's and the environment's pipes are dup'ed onto fds 3 and 4 in the child: a
    // leaked fd 3 or 4 of ours is replaced, never closed.
    const leaked = inheritedDescriptors().filter((fd) => fd >= pipes.length);
    const [command, commandArgs] = withDescriptorsClosed(bwrap, args, leaked, BASH);

    return new Promise<SandboxResult>((resolve) => {
      let killedFor: 'timed_out' | 'output_limit' | 'cancelled' | null = null;
      let settled = false;
      // bwrap starts with an EMPTY environment: its own pid-1 inside is a fork of it, and a
      // fork's /proc/1/environ would otherwise show the worker's variables to the program.
      const child = spawn(command, commandArgs, {
        stdio: pipes,
        env: {},
        detached: true,
        ...(this.#identity === null ? {} : { uid: this.#identity.uid, gid: this.#identity.gid }),
      });
      const kill = (why: 'timed_out' | 'output_limit' | 'cancelled') => {
        if (killedFor === null) killedFor = why;
        // bwrap leads its own process group; killing it tears the PID namespace down with it
        // (--die-with-parent kills the program, and PID 1's death kills every process left).
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
        setTimeout(() => finish(null, 'SIGKILL'), KILL_GRACE_MS).unref();
      };
      const capture = new BoundedCapture(request.limits.outputBytes, () => kill('output_limit'));
      const wall = setTimeout(() => kill('timed_out'), Math.max(1, request.limits.wallSeconds * 1000));
      const onAbort = () => kill('cancelled');
      signal.addEventListener('abort', onAbort, { once: true });

      const finish = (code: number | null, rawSignal: string | null, spawnError?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(wall);
        signal.removeEventListener('abort', onAbort);
        child.stdout?.destroy();
        child.stderr?.destroy();
        const durationMs = Math.round(performance.now() - started);
        if (spawnError !== undefined) {
          resolve({ ...notStarted(`bwrap could not be started: ${spawnError.message}`), durationMs });
          return;
        }
        const status = splitStatus(code, rawSignal);
        const stderrTail = capture.stderrTail(4096);
        const stdout = capture.result('stdout');
        const stderr = capture.result('stderr');
        // bwrap's own setup failures exit 1 with "bwrap: ..." before the program ever runs.
        if (killedFor === null && status.exitCode === 1 && stdout.totalBytes === 0 && stderr.text.startsWith('bwrap: ')) {
          resolve({ ...notStarted(stderr.text.trim().slice(0, 1000)), durationMs });
          return;
        }
        const ending = classifyEnding({
          killedFor,
          exitCode: status.exitCode,
          signal: status.signal,
          durationMs,
          cpuSeconds: request.limits.cpuSeconds,
          stderrTail,
        });
        resolve({ ending, exitCode: status.exitCode, signal: status.signal, stdout, stderr, durationMs, detail: null });
      };

      child.on('error', (error) => finish(null, null, error));
      child.stdout?.on('data', (chunk: Buffer) => capture.add('stdout', chunk));
      child.stderr?.on('data', (chunk: Buffer) => capture.add('stderr', chunk));
      // 'close': the exit status AND every pipe drained (a daemonised grandchild holding the
      // pipe is killed with the namespace).
      child.on('close', (code, closeSignal) => finish(code, closeSignal));
      child.stdin?.on('error', () => undefined);
      if (SECCOMP_FILTER !== null) {
        const filterPipe = child.stdio[SECCOMP_FD] as NodeJS.WritableStream | null | undefined;
        filterPipe?.on('error', () => undefined);
        filterPipe?.end(SECCOMP_FILTER);
      }
      if (platformFd !== undefined && platformArgs !== null) {
        const environmentPipe = child.stdio[platformFd] as NodeJS.WritableStream | null | undefined;
        environmentPipe?.on('error', () => undefined);
        environmentPipe?.end(platformArgs);
      }
      if (request.stdin !== undefined) child.stdin?.end(request.stdin);
      else child.stdin?.end();
    });
  }
}

function notStarted(detail: string): SandboxResult {
  return {
    ending: 'failed_to_start',
    exitCode: null,
    signal: null,
    stdout: EMPTY_STREAM,
    stderr: EMPTY_STREAM,
    durationMs: 0,
    detail,
  };
}
