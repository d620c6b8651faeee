import { spawn } from 'node:child_process';
import { accessSync, constants as fsConstants, mkdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { Sandbox, SandboxAvailability, SandboxRequest, SandboxResult, WorkspaceUsage } from '@veetbot/ports';
import { BoundedCapture } from './bounded-capture';
import { bwrapArguments, GROUP, PASSWD, PRLIMIT, platformEnvironmentArgs } from './bwrap-arguments';
import { classifyEnding, splitStatus } from './ending';
import { handOver, hostIdentity, searchable, untraversable, type HostIdentity } from './host-identity';
import type { WorkspaceFileService } from './workspace-files';
import { inheritedDescriptors, withDescriptorsClosed } from './inherited-descriptors';
import { compileSeccompFilter, syscallTable } from './seccomp-filter';

const BWRAP_CANDIDATES = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'];
const BASH = '/bin/bash';
/** After the kill, how long to wait for the pipes to close before giving up on them. */
const KILL_GRACE_MS = 5_000;

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
  /**
   * The data folder. A root worker gives it search permission for others (o+x: never read,
   * never write) so that bwrap, started as the sandbox's host user, can reach the workspaces
   * below it (docs/adr/0058); its files keep their own modes.
   */
  readonly dataDir?: string;
  /**
   * The workspace helper (docs/adr/0058): a run's workspace is capped. The program starts with
   * RLIMIT_FSIZE at what is left and the tree is measured while it runs; past the cap the
   * sandbox is killed (`disk_limit`). Absent: no cap.
   */
  readonly workspaceFiles?: WorkspaceFileService;
  /** How often the workspace is measured while a program runs; default 500 ms. */
  readonly diskPollMs?: number;
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
  readonly #dataDir: string | undefined;
  readonly #workspaceFiles: WorkspaceFileService | undefined;
  readonly #diskPollMs: number;
  #availability: Promise<SandboxAvailability> | undefined;

  constructor(options: BubblewrapSandboxOptions) {
    this.#stateDir = options.stateDir;
    this.#bwrapOption = options.bwrapPath;
    this.#workspaceRoot = options.workspaceRoot;
    this.#dataDir = options.dataDir;
    this.#workspaceFiles = options.workspaceFiles;
    this.#diskPollMs = options.diskPollMs ?? 500;
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
    if (this.#identity !== null && this.#dataDir !== undefined) {
      // The first start as root needs no `chmod` by hand (issue 30): search only, never list.
      try {
        mkdirSync(this.#dataDir, { recursive: true, mode: 0o700 });
        searchable(this.#dataDir);
      } catch (error) {
        return { available: false, reason: `the data folder cannot be made traversable for the sandbox user: ${String(error)}` };
      }
    }
    const blocked = this.#identity === null ? null : untraversable(this.#stateDir, this.#identity);
    if (blocked !== null) {
      return {
        available: false,
        reason: `${blocked} is not traversable by the sandbox's host user (uid ${this.#identity?.uid}); the folders above the data folder need o+x (chmod o+x ${blocked}: its files keep their own modes), or move the data folder (VEETBOT_DATA_DIR) below traversable folders`,
      };
    }
    const probe = path.join(this.#stateDir, 'probe');
    try {
      mkdirSync(this.#stateDir, { recursive: true, mode: 0o711 });
      // The mode asked of mkdir is cut by the umask (the product runs with 077): set it outright.
      if (this.#identity !== null) searchable(this.#stateDir);
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
        // The operator's reason (it may name a host path) goes on the span, never in the tenant's text.
        if (result.detail !== null) span.setAttribute('veetbot.sandbox.detail', result.detail.slice(0, 1000));
        if (result.ending !== 'exited') span.setStatus({ code: SpanStatusCode.ERROR, message: result.ending });
        return result;
      } finally {
        span.end();
      }
    });
  }

  /** What the run's workspace holds against its cap; undefined: not capped (no helper, not a run folder). */
  async #diskUsage(workspace: string): Promise<WorkspaceUsage | undefined> {
    const files = this.#workspaceFiles;
    if (files === undefined || !files.covers(workspace)) return undefined;
    const usage = await files.usageOf(workspace);
    return usage.ok ? usage.value : undefined;
  }

  async #execute(request: SandboxRequest, signal: AbortSignal, bwrap: string): Promise<SandboxResult> {
    const started = performance.now();
    if (request.argv.length === 0) return notStarted('argv is empty');
    let workspace: string;
    try {
      workspace = realpathSync(request.workspaceHostPath);
      if (!statSync(workspace).isDirectory()) return notStarted('the workspace is not a directory');
    } catch (error) {
      return notStarted(`the workspace cannot be used: ${String(error)}`);
    }
    if (signal.aborted) return { ...notStarted('cancelled before start'), ending: 'cancelled' };
    if (this.#identity !== null) {
      try {
        handOver(workspace, this.#identity, this.#workspaceRoot);
      } catch (error) {
        return notStarted(`the workspace cannot be handed to the sandbox user: ${String(error)}`);
      }
    }
    // The cap (docs/adr/0058): a program may always start — at the cap it can still delete — but
    // it may not GROW the workspace past the cap: RLIMIT_FSIZE at what is left, and the tree
    // measured while it runs and once more when it ends.
    const before = await this.#diskUsage(workspace);
    const remaining = before === undefined ? undefined : Math.max(0, before.maximumBytes - before.bytes);
    const grewPastCap = (now: WorkspaceUsage | undefined): boolean =>
      before !== undefined &&
      now !== undefined &&
      ((now.bytes >= now.maximumBytes && now.bytes > before.bytes) || (now.entries >= now.maximumEntries && now.entries > before.entries));
    const platformArgs = platformEnvironmentArgs(request.platformEnvironment ?? {});
    if (platformArgs !== null && 'refused' in platformArgs) return notStarted(platformArgs.refused);
    // Every descriptor past stdio is a pipe this process fills: the seccomp filter (fd 3 when
    // there is one), the platform environment, the synthesized passwd and group.
    const pipes: ('pipe' | 'ignore')[] = ['pipe', 'pipe', 'pipe'];
    const feeds = new Map<number, Buffer>();
    const feed = (content: Buffer): number => {
      const fd = pipes.push('pipe') - 1;
      feeds.set(fd, content);
      return fd;
    };
    const seccompFd = SECCOMP_FILTER === null ? undefined : feed(SECCOMP_FILTER);
    const platformFd = platformArgs === null ? undefined : feed(platformArgs);
    const args = bwrapArguments({
      argv: request.argv,
      workspaceHostPath: workspace,
      limits: request.limits,
      readOnlyBinds: request.readOnlyBinds ?? [],
      passwdFd: feed(Buffer.from(PASSWD)),
      groupFd: feed(Buffer.from(GROUP)),
      ...(remaining === undefined ? {} : { fileSizeBytes: remaining }),
      ...(seccompFd === undefined ? {} : { seccompFd }),
      ...(platformFd === undefined ? {} : { platformEnvironmentFd: platformFd }),
    });
    // The fed pipes are dup'ed onto fds 3 and up in the child: a leaked fd among them is
    // replaced, never closed.
    const leaked = inheritedDescriptors().filter((fd) => fd >= pipes.length);
    const [command, commandArgs] = withDescriptorsClosed(bwrap, args, leaked, BASH);

    const result = await new Promise<SandboxResult>((resolve) => {
      let killedFor: 'timed_out' | 'output_limit' | 'cancelled' | 'disk_limit' | null = null;
      let settled = false;
      // bwrap starts with an EMPTY environment: its own pid-1 inside is a fork of it, and a
      // fork's /proc/1/environ would otherwise show the worker's variables to the program.
      const child = spawn(command, commandArgs, {
        stdio: pipes,
        env: {},
        detached: true,
        ...(this.#identity === null ? {} : { uid: this.#identity.uid, gid: this.#identity.gid }),
      });
      const kill = (why: 'timed_out' | 'output_limit' | 'cancelled' | 'disk_limit') => {
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
      // The workspace's cap over the whole tree (RLIMIT_FSIZE bounds one file): measured while it runs.
      let measuring = false;
      const disk =
        remaining === undefined
          ? undefined
          : setInterval(() => {
              if (measuring || settled) return;
              measuring = true;
              void this.#diskUsage(workspace)
                .then((now) => {
                  if (grewPastCap(now) && !settled) kill('disk_limit');
                })
                .finally(() => {
                  measuring = false;
                });
            }, this.#diskPollMs);
      disk?.unref();

      const finish = (code: number | null, rawSignal: string | null, spawnError?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(wall);
        if (disk !== undefined) clearInterval(disk);
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
      for (const [fd, content] of feeds) {
        const pipe = child.stdio[fd] as NodeJS.WritableStream | null | undefined;
        pipe?.on('error', () => undefined);
        pipe?.end(content);
      }
      if (request.stdin !== undefined) child.stdin?.end(request.stdin);
      else child.stdin?.end();
    });
    // A program whose write was cut at the cap may still exit 0 (a shell goes on past a killed
    // command): a workspace left at its cap is reported as the cap, whatever the exit code.
    if (result.ending === 'exited' && before !== undefined && grewPastCap(await this.#diskUsage(workspace))) {
      return { ...result, ending: 'disk_limit' };
    }
    return result;
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
