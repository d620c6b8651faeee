import { chmod, lstat, mkdtemp, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FORWARDER_SOURCE } from './forwarder-source';

/** The chromium the platform runs: Debian's, never a downloaded browser (docs/adr/0079). */
export const CHROMIUM_PATH = '/usr/bin/chromium';
export const BWRAP_PATH = '/usr/bin/bwrap';
/** The flags every browser gets (on top of playwright's own). */
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] as const;

/** Inside the sandbox. */
const FORWARDER_INSIDE = '/opt/veetbot/forwarder.cjs';
const NODE_INSIDE = '/opt/veetbot/node';
const SOCKET_INSIDE = '/run/veetbot/proxy.sock';
const HOME_INSIDE = '/home/browser';
const TMPFS_BYTES = 512 * 1024 * 1024;
const SHM_BYTES = 256 * 1024 * 1024;

const SYSTEM_FOLDERS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** From /etc, what the loader, fontconfig and Debian's chromium script read; never all of /etc. */
const ETC_ENTRIES = [
  '/etc/alternatives',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/fonts',
  '/etc/chromium.d',
  '/etc/chromium',
];

const PASSWD = `browser:x:1000:1000:browser:${HOME_INSIDE}:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`;
const GROUP = 'browser:x:1000:\nnogroup:x:65534:\n';

/** One browser's private host folder: the launcher, the forwarder and the proxy's socket. */
export interface IsolatedLaunch {
  /** What playwright runs as the browser: a script that execs bwrap. */
  readonly executablePath: string;
  /** Where the host's proxy listens; bound read-only into the sandbox. */
  readonly proxySocketPath: string;
  dispose(): Promise<void>;
}

async function systemMounts(): Promise<string[]> {
  const args: string[] = [];
  for (const entry of [...SYSTEM_FOLDERS, ...ETC_ENTRIES]) {
    try {
      const stats = await lstat(entry);
      if (stats.isSymbolicLink()) args.push('--symlink', await readlink(entry), entry);
      else args.push('--ro-bind', entry, entry);
    } catch {
      // Absent on this host: nothing to bind.
    }
  }
  return args;
}

/** POSIX shell single-quoting: the launcher holds host-generated paths only, quoted all the same. */
function quote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * The bwrap command line (docs/adr/0079): every namespace (`--unshare-all`: the network
 * namespace has a loopback and nothing else), read-only system folders, private tmpfs for /tmp,
 * HOME and /dev/shm, the forwarder and the proxy socket bound read-only, no host environment.
 * Nothing of a tenant's is bound: the host never follows a path the browser can write.
 */
export async function bwrapArguments(folder: string, nodePath: string): Promise<string[]> {
  return [
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--uid',
    '1000',
    '--gid',
    '1000',
    '--hostname',
    'browser',
    ...(await systemMounts()),
    '--ro-bind',
    join(folder, 'passwd'),
    '/etc/passwd',
    '--ro-bind',
    join(folder, 'group'),
    '/etc/group',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    String(SHM_BYTES),
    '--tmpfs',
    '/dev/shm',
    '--size',
    String(TMPFS_BYTES),
    '--tmpfs',
    '/tmp',
    '--size',
    String(TMPFS_BYTES),
    '--tmpfs',
    HOME_INSIDE,
    '--ro-bind',
    nodePath,
    NODE_INSIDE,
    '--ro-bind',
    join(folder, 'forwarder.cjs'),
    FORWARDER_INSIDE,
    '--ro-bind',
    join(folder, 'proxy.sock'),
    SOCKET_INSIDE,
    '--remount-ro',
    '/',
    '--chdir',
    '/tmp',
    '--clearenv',
    '--setenv',
    'HOME',
    HOME_INSIDE,
    '--setenv',
    'PATH',
    '/usr/bin:/bin',
    '--setenv',
    'LANG',
    'C.UTF-8',
    '--',
    NODE_INSIDE,
    FORWARDER_INSIDE,
    SOCKET_INSIDE,
    CHROMIUM_PATH,
  ];
}

/**
 * Prepare one browser's folder (mode 0700, host-owned) and its launcher. The proxy must listen
 * on `proxySocketPath` before the browser starts: bwrap binds a file that exists.
 */
export async function prepareIsolatedLaunch(nodePath: string = process.execPath): Promise<IsolatedLaunch> {
  const folder = await mkdtemp(join(tmpdir(), 'veetbot-browser-'));
  await chmod(folder, 0o700);
  await writeFile(join(folder, 'forwarder.cjs'), FORWARDER_SOURCE, { mode: 0o444 });
  await writeFile(join(folder, 'passwd'), PASSWD, { mode: 0o444 });
  await writeFile(join(folder, 'group'), GROUP, { mode: 0o444 });
  const args = await bwrapArguments(folder, nodePath);
  const launcher = join(folder, 'launch.sh');
  // playwright appends its own flags (the pipe, the profile folder, headless): "$@" carries them.
  await writeFile(launcher, `#!/bin/sh\nexec ${[BWRAP_PATH, ...args].map(quote).join(' ')} "$@"\n`, { mode: 0o700 });
  return {
    executablePath: launcher,
    proxySocketPath: join(folder, 'proxy.sock'),
    dispose: () => rm(folder, { recursive: true, force: true }),
  };
}
