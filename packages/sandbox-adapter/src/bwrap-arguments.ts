import { lstatSync, readlinkSync } from 'node:fs';
import { synthesizedEnvironment } from '@veetbot/domain';
import type { SandboxLimits, SandboxReadOnlyBind } from '@veetbot/ports';

/** Where the run's workspace appears inside, and the program's working folder. */
export const SANDBOX_WORKSPACE = '/workspace';
/** HOME inside: a private tmpfs, gone with the sandbox (RULINGS.md: "HOME (a private folder)"). */
export const SANDBOX_HOME = '/home/sandbox';
/** The uid and gid inside the user namespace (docs/adr/0037). */
export const SANDBOX_UID = 1000;
export const SANDBOX_GID = 1000;
/** Each private tmpfs (/tmp, HOME) is capped: tmpfs pages are RAM the rlimits do not count. */
export const TMPFS_BYTES = 64 * 1024 * 1024;
/** prlimit (util-linux) applies the rlimits inside, after every mount is in place. */
export const PRLIMIT = '/usr/bin/prlimit';

/** Top-level system folders a program needs; on a merged-/usr host most are symlinks into /usr. */
const SYSTEM_FOLDERS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/**
 * From /etc, only what the dynamic loader and interpreters read. Never all of /etc: no
 * shadow, no machine secrets, no resolver configuration (there is no network anyway).
 */
const ETC_ENTRIES = ['/etc/alternatives', '/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/localtime'];

/** The read-only system folders (and the loader's /etc files) every sandbox and the workspace helper get. */
export function systemMounts(): string[] {
  const args: string[] = [];
  for (const folder of [...SYSTEM_FOLDERS, ...ETC_ENTRIES]) {
    let stats: ReturnType<typeof lstatSync>;
    try {
      stats = lstatSync(folder);
    } catch {
      continue;
    }
    if (stats.isSymbolicLink()) args.push('--symlink', readlinkSync(folder), folder);
    else args.push('--ro-bind', folder, folder);
  }
  return args;
}

export interface BwrapArgumentsInput {
  readonly argv: readonly string[];
  readonly workspaceHostPath: string;
  readonly limits: SandboxLimits;
  readonly readOnlyBinds: readonly SandboxReadOnlyBind[];
  /**
   * The descriptors bwrap copies the synthesized /etc/passwd and /etc/group from
   * (`--ro-bind-data`): no host file is bound for them, so the mount table names none.
   */
  readonly passwdFd: number;
  readonly groupFd: number;
  /** RLIMIT_FSIZE: the bytes the run's workspace may still grow by (docs/adr/0058); absent: none. */
  readonly fileSizeBytes?: number;
  /** The descriptor bwrap reads the compiled seccomp filter from; absent: no filter. */
  readonly seccompFd?: number;
  /**
   * The descriptor bwrap reads the platform environment's `--setenv` arguments from
   * (`--args FD`, NUL-separated): a token on bwrap's command line would be readable by every
   * host user in /proc/PID/cmdline (docs/adr/0038). Absent: no platform environment.
   */
  readonly platformEnvironmentFd?: number;
}

/**
 * The whole bwrap command line (docs/adr/0037). Order matters to bwrap: mounts are applied in
 * the order given, so the system folders come first and the workspace, HOME and /tmp after.
 */
export function bwrapArguments(input: BwrapArgumentsInput): string[] {
  const { limits } = input;
  const env = synthesizedEnvironment(SANDBOX_HOME);
  const cpu = Math.max(1, Math.ceil(limits.cpuSeconds));
  return [
    // Every namespace bubblewrap knows: user, PID, network (a loopback of its own and nothing
    // else: no route out), IPC, UTS, cgroup.
    '--unshare-all',
    '--die-with-parent',
    // A new session: the program cannot reach the worker's terminal (TIOCSTI).
    '--new-session',
    '--uid',
    String(SANDBOX_UID),
    '--gid',
    String(SANDBOX_GID),
    '--hostname',
    'sandbox',
    ...systemMounts(),
    '--ro-bind-data',
    String(input.passwdFd),
    '/etc/passwd',
    '--ro-bind-data',
    String(input.groupFd),
    '/etc/group',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    String(TMPFS_BYTES),
    '--tmpfs',
    '/tmp',
    '--size',
    String(TMPFS_BYTES),
    '--tmpfs',
    SANDBOX_HOME,
    ...input.readOnlyBinds.flatMap((bind) => ['--ro-bind', bind.hostPath, bind.sandboxPath]),
    '--bind',
    input.workspaceHostPath,
    SANDBOX_WORKSPACE,
    // bwrap's root is a tmpfs of its own: read-only once every mount point exists in it, so the
    // workspace, /tmp and HOME are the only places a program can write.
    '--remount-ro',
    '/',
    '--chdir',
    SANDBOX_WORKSPACE,
    // Nothing of the worker's environment: the synthesized tier only (RULINGS.md).
    '--clearenv',
    ...Object.entries(env).flatMap(([name, value]) => ['--setenv', name, value]),
    ...(input.platformEnvironmentFd === undefined ? [] : ['--args', String(input.platformEnvironmentFd)]),
    // Installed last, just before exec: bwrap's own setup is not filtered, the program is.
    ...(input.seccompFd === undefined ? [] : ['--seccomp', String(input.seccompFd)]),
    '--',
    PRLIMIT,
    // Soft CPU limit sends SIGXCPU; the hard one, a second later, SIGKILL.
    `--cpu=${cpu}:${cpu + 1}`,
    `--as=${Math.floor(limits.memoryBytes)}`,
    `--nproc=${Math.floor(limits.processes)}`,
    '--core=0',
    // One file may not outgrow what the workspace has left; the whole tree is watched as well.
    ...(input.fileSizeBytes === undefined ? [] : [`--fsize=${Math.max(0, Math.floor(input.fileSizeBytes))}`]),
    '--',
    ...input.argv,
  ];
}

/** The sandbox user's identity files: it exists, and owns nothing. */
export const PASSWD = `sandbox:x:${SANDBOX_UID}:${SANDBOX_GID}:sandbox:${SANDBOX_HOME}:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`;
export const GROUP = `sandbox:x:${SANDBOX_GID}:\nnogroup:x:65534:\n`;

/** Platform variable names: VEETBOT_ only, so the synthesized tier is never overridden. */
const PLATFORM_NAME = /^VEETBOT_[A-Z0-9_]+$/;

/**
 * The `--setenv` arguments for `--args FD`, NUL-separated, or a reason they are refused (a
 * name outside VEETBOT_, a NUL in a value). Empty input: null (no descriptor at all).
 */
export function platformEnvironmentArgs(environment: Readonly<Record<string, string>>): Buffer | null | { refused: string } {
  const entries = Object.entries(environment);
  if (entries.length === 0) return null;
  const parts: string[] = [];
  for (const [name, value] of entries) {
    if (!PLATFORM_NAME.test(name)) return { refused: `platform variable ${JSON.stringify(name)} must match VEETBOT_[A-Z0-9_]+` };
    if (typeof value !== 'string' || value.includes('\0')) return { refused: `platform variable ${name} holds a NUL or is not text` };
    parts.push('--setenv', name, value);
  }
  return Buffer.from(`${parts.join('\0')}\0`, 'utf8');
}
