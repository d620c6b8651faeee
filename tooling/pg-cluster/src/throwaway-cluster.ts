import { execFile } from 'node:child_process';
import { chownSync, existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A PostgreSQL cluster owned by its caller (docs/adr/0067): initdb in a fresh temp folder, its
 * own free port on 127.0.0.1, trust auth for `postgres` — the shared test server's settings —
 * so a test or a benchmark may stop it in immediate mode (a crash: no checkpoint, WAL replay on
 * start), start it again, and remove it, without touching the server other processes share.
 */
export interface ThrowawayCluster {
  readonly port: number;
  readonly folder: string;
  /** postgres://postgres@127.0.0.1:<port>/<database> (default `postgres`). */
  url(database?: string): string;
  /** `pg_ctl stop -m <mode>`; `immediate` is a crash (every backend killed, recovery on start). */
  stop(mode?: 'immediate' | 'fast'): Promise<void>;
  start(): Promise<void>;
  readonly running: boolean;
  /** The server's own log (for a failure message). */
  log(): Promise<string>;
  /** Stop (immediate) and delete the folder. Safe to call twice. */
  remove(): Promise<void>;
}

export interface ThrowawayClusterOptions {
  /** Default: a free port. */
  readonly port?: number;
  /** Extra `-c name=value` server settings. */
  readonly settings?: Readonly<Record<string, string>>;
}

/** The newest installed server's bin folder (Debian: /usr/lib/postgresql/<major>/bin), or PG_BINDIR. */
export function postgresBinFolder(): string {
  const fromEnv = process.env.PG_BINDIR;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((m) => /^\d+$/.test(m))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const found = majors.map((m) => join(root, m, 'bin')).find((bin) => existsSync(join(bin, 'initdb')));
  if (found === undefined) throw new Error('no PostgreSQL server binaries found (install postgresql, or set PG_BINDIR)');
  return found;
}

export async function freeTcpPort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

/**
 * initdb refuses to run as root (and CI runs as root): as root every server command runs as the
 * `postgres` OS user through runuser, and the folder is handed to that user.
 */
function asServerUser(command: string, args: readonly string[]): [string, string[]] {
  if (process.getuid?.() === 0) return ['runuser', ['-u', 'postgres', '--', command, ...args]];
  return [command, [...args]];
}

async function serverCommand(command: string, args: readonly string[], timeoutMs = 120_000): Promise<void> {
  const [file, argv] = asServerUser(command, args);
  await run(file, argv, { timeout: timeoutMs, env: { ...process.env, LC_ALL: 'C.UTF-8' } });
}

export async function startThrowawayCluster(options: ThrowawayClusterOptions = {}): Promise<ThrowawayCluster> {
  const bin = postgresBinFolder();
  const folder = await mkdtemp(join(tmpdir(), 'veetbot-pg-'));
  const data = join(folder, 'data');
  const logFile = join(folder, 'server.log');
  if (process.getuid?.() === 0) {
    const { uid, gid } = await serverUserIds();
    chownSync(folder, uid, gid);
  }
  const port = options.port ?? (await freeTcpPort());
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    port: String(port),
    // The socket in the cluster's own folder: never the shared server's /var/run/postgresql.
    unix_socket_directories: folder,
    max_connections: '100',
    shared_buffers: '128MB',
    ...options.settings,
  };
  const serverOptions = Object.entries(settings)
    .map(([k, v]) => `-c ${k}=${v}`)
    .join(' ');
  let running = false;
  let removed = false;
  const cluster: ThrowawayCluster = {
    port,
    folder,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    get running() {
      return running;
    },
    async start() {
      await serverCommand(join(bin, 'pg_ctl'), ['-D', data, '-l', logFile, '-o', serverOptions, '-w', '-t', '60', 'start']);
      running = true;
    },
    async stop(mode = 'immediate') {
      await serverCommand(join(bin, 'pg_ctl'), ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
      running = false;
    },
    log: () => readFile(logFile, 'utf8').catch(() => ''),
    async remove() {
      if (removed) return;
      removed = true;
      if (running) await cluster.stop('immediate').catch(() => undefined);
      await rm(folder, { recursive: true, force: true });
    },
  };
  try {
    await serverCommand(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale', 'C.UTF-8']);
    await cluster.start();
  } catch (error) {
    await cluster.remove();
    throw error;
  }
  return cluster;
}

async function serverUserIds(): Promise<{ uid: number; gid: number }> {
  const passwd = await readFile('/etc/passwd', 'utf8');
  const line = passwd.split('\n').find((l) => l.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) throw new Error('running as root, but there is no `postgres` OS user to run the server as');
  return { uid: Number(uid), gid: Number(gid) };
}
