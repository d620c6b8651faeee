import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './split-scene';

/**
 * The second durable peer (issue 31, docs/adr/0073): Restate, reached as a client reaches it —
 * over HTTP, through its ingress. `restate-server` (the binary `@restatedev/restate-server` ships
 * in `@restatedev/restate-server-<os>-<arch>`, pinned in package.json) runs on a temporary folder
 * with free ports for its ingress, admin API and node-to-node address; the service
 * (`restate-service-child.ts`, `@restatedev/restate-sdk`) runs in a process of its own; the
 * deployment is registered through the admin API. `close()` stops both and removes the folder,
 * and so does a failure while opening.
 */
export interface RestatePeer {
  /** One invocation of `bench/step` through the ingress, waiting for its result: one durable `ctx.run`. */
  call(line: string): Promise<void>;
  /** Lines the step wrote to its outbox so far (each call's effect, for the once-each check). */
  outboxLines(): Promise<number>;
  /** Bytes under the server's data folder (its log, partition store and metadata). */
  dataBytes(): Promise<number>;
  readonly pids: { readonly server: number | undefined; readonly service: number | undefined };
  close(): Promise<void>;
}

export interface RestatePeerFacts {
  readonly serverVersion: string;
  readonly sdkVersion: string;
  /** What the server persists and how, from its own `--dump-config` with the settings used here. */
  readonly persistence: string;
}

export type RestatePeerResult =
  | { readonly ok: true; readonly peer: RestatePeer; readonly facts: RestatePeerFacts }
  | { readonly ok: false; readonly reason: string };

const require = createRequire(import.meta.url);
const START_TIMEOUT_MS = 90_000;

export async function openRestatePeer(): Promise<RestatePeerResult> {
  let binary: string;
  try {
    binary = restateServerBinary();
  } catch (error) {
    return { ok: false, reason: describe(error) };
  }
  const folder = await mkdtemp(join(tmpdir(), 'veetbot-bench-restate-'));
  const started: Started[] = [];
  try {
    const [ingressPort, adminPort, nodePort] = await distinctFreePorts(3);
    const args = [
      '--no-logo',
      '--base-dir',
      join(folder, 'data'),
      '--node-name',
      'veetbot-bench',
      '--bind-address',
      `127.0.0.1:${nodePort}`,
      '--advertised-address',
      `http://127.0.0.1:${nodePort}/`,
    ];
    // Only addresses and the vendor's usage report change; storage, log and flush settings stay
    // as shipped (the persistence line prints them from the server itself).
    const env = {
      ...process.env,
      RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingressPort}`,
      RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${adminPort}`,
      RESTATE_DISABLE_TELEMETRY: 'true',
    };
    const persistence = describePersistence(await dumpConfig(binary, args, env));
    const server = start(binary, args, env);
    started.push(server);
    const admin = `http://127.0.0.1:${adminPort}`;
    const ingress = `http://127.0.0.1:${ingressPort}`;
    await waitUntil(server, async () => (await fetch(`${admin}/health`)).ok, 'the admin API to answer /health');
    await waitUntil(server, async () => (await fetch(`${ingress}/restate/health`)).ok, 'the ingress to answer /restate/health');

    const outbox = join(folder, 'outbox.log');
    const service = start(process.execPath, [...process.execArgv, fileURLToPath(new URL('./restate-service-child.ts', import.meta.url))], {
      ...process.env,
      BENCH_RESTATE_OUTBOX: outbox,
    });
    started.push(service);
    await waitUntil(service, async () => /restate service listening on \d+/.test(service.output()), 'the service to listen');
    const servicePort = /restate service listening on (\d+)/.exec(service.output())![1]!;
    await waitUntil(
      server,
      async () => {
        const response = await fetch(`${admin}/deployments`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ uri: `http://127.0.0.1:${servicePort}`, force: true }),
        });
        if (!response.ok) throw new Error(`POST /deployments answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
        return true;
      },
      'the deployment to register',
    );
    const call = async (line: string): Promise<void> => {
      const response = await fetch(`${ingress}/bench/step`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(line),
      });
      const body = await response.text();
      if (!response.ok || body !== JSON.stringify(line)) throw new Error(`Restate call failed: ${response.status} ${body.slice(0, 300)}`);
    };
    // The schema reaches the ingress shortly after registration: the first call may 404.
    await waitUntil(
      server,
      async () => {
        await call('ready');
        return true;
      },
      'a first call to succeed',
    );
    const peer: RestatePeer = {
      call,
      outboxLines: async () => (await readFile(outbox, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '').length,
      dataBytes: () => folderBytes(join(folder, 'data')),
      pids: { server: server.child.pid, service: service.child.pid },
      close: () => stopAll(started, folder),
    };
    return {
      ok: true,
      peer,
      facts: {
        serverVersion: await packageVersion('@restatedev/restate-server/package.json'),
        sdkVersion: await packageVersion('@restatedev/restate-sdk/package.json'),
        persistence,
      },
    };
  } catch (error) {
    const output = started.map((s) => s.output().trim().split('\n').slice(-3).join(' | ')).join(' || ');
    await stopAll(started, folder);
    return { ok: false, reason: `${describe(error)}${output === '' ? '' : ` (last output: ${output.slice(-600)})`}` };
  }
}

/** The platform binary inside the optional dependency of `@restatedev/restate-server` (as its own launcher finds it). */
export function restateServerBinary(): string {
  const launcher = require.resolve('@restatedev/restate-server/package.json');
  return createRequire(launcher).resolve(`@restatedev/restate-server-${platform()}-${arch()}/bin/restate-server`);
}

interface Started {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  output(): string;
}

function start(command: string, args: string[], env: NodeJS.ProcessEnv): Started {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  // Only the tail is kept: the server logs every start-up step.
  const keep = (d: string) => {
    text = (text + d).slice(-20_000);
  };
  child.stdout?.setEncoding('utf8').on('data', keep);
  child.stderr?.setEncoding('utf8').on('data', keep);
  const exited = new Promise<void>((done) => {
    child.once('exit', () => done());
    child.once('error', () => done());
  });
  return { child, exited, output: () => text };
}

async function waitUntil(process: Started, ready: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let last = '';
  for (;;) {
    if (process.child.exitCode !== null || process.child.signalCode !== null)
      throw new Error(`the process exited (${process.child.exitCode ?? process.child.signalCode}) while waiting for ${what}`);
    try {
      if (await ready()) return;
    } catch (error) {
      last = describe(error);
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last === '' ? '' : `: ${last}`}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stopAll(started: readonly Started[], folder: string): Promise<void> {
  const alive = (s: Started) => s.child.exitCode === null && s.child.signalCode === null;
  // The service first, then the server (SIGTERM lets it flush and close its stores).
  for (const s of [...started].reverse()) {
    if (!alive(s)) continue;
    s.child.kill('SIGTERM');
    await Promise.race([s.exited, new Promise((r) => setTimeout(r, 15_000))]);
    if (alive(s)) {
      s.child.kill('SIGKILL');
      await s.exited;
    }
  }
  await rm(folder, { recursive: true, force: true });
}

async function distinctFreePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

export function dumpConfig(binary: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((done, fail) => {
    execFile(binary, [...args, '--dump-config'], { env, maxBuffer: 4 * 1024 * 1024 }, (error, stdout) =>
      error === null ? done(stdout) : fail(error),
    );
  });
}

/** `section.key` → value, from the TOML `--dump-config` prints (flat keys and `[a.b]` tables only). */
export function parseDumpedConfig(text: string): Map<string, string> {
  const values = new Map<string, string>();
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const table = /^\[([^\]]+)\]$/.exec(line);
    if (table !== null) {
      section = table[1]!;
      continue;
    }
    const pair = /^([A-Za-z0-9_-]+)\s*=\s*(.+)$/.exec(line);
    if (pair !== null) values.set(section === '' ? pair[1]! : `${section}.${pair[1]}`, pair[2]!.replace(/^"(.*)"$/, '$1'));
  }
  return values;
}

/**
 * One line: where the peer's durable state goes and when it is flushed, as its own configuration
 * says (the keys that decide it, as shipped; `unset` where the dump has no such key).
 */
export function describePersistence(dump: string): string {
  const config = parseDumpedConfig(dump);
  const get = (key: string) => config.get(key) ?? 'not in the dump';
  return [
    `Restate persists each invocation's journal (the call, the ctx.run result, the completion) as records of its log (Bifrost, provider ${get('bifrost.default-provider')}, replication ${get('default-replication')}: this node's own log-server, RocksDB with its WAL, rocksdb-disable-wal-fsync = ${get('log-server.rocksdb-disable-wal-fsync')})`,
    `applied to its partition store (worker.storage, RocksDB, ${get('default-num-partitions')} partitions, derived from the log; rocksdb-disable-wal: ${get('worker.storage.rocksdb-disable-wal')}; memtables flushed in the background: rocksdb-max-background-flushes = ${get('worker.storage.rocksdb-max-background-flushes')})`,
    `and its metadata in the node's metadata-server (RocksDB); journal retention ${get('default-journal-retention')}; settings as shipped (only addresses, the data folder and the vendor's usage report set)`,
  ].join(', ');
}

async function folderBytes(folder: string): Promise<number> {
  let total = 0;
  const entries = await readdir(folder, { withFileTypes: true, recursive: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const size = await stat(join(entry.parentPath, entry.name)).then(
      (s) => s.size,
      () => 0,
    );
    total += size;
  }
  return total;
}

async function packageVersion(specifier: string): Promise<string> {
  const text = await readFile(require.resolve(specifier), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
