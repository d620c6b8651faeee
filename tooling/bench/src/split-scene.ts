import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VeetbotClient } from '@veetbot/client';
import { scratchDatabase, serverUrl, type ScratchDatabase } from './postgres-server';

const REPO = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

export type StartedNode = ReturnType<typeof startNode>;

export interface SplitSceneOptions {
  /** Names the scratch database (`veetbot_bench_<name>`) and the data folder. */
  readonly name: string;
  /** The worker's own settings (concurrency, poll interval), beside VEETBOT_WORKER_PORT=0. */
  readonly workerEnv?: Readonly<Record<string, string>>;
  /** Given to both processes (e.g. a bench-only probe's settings). */
  readonly env?: Readonly<Record<string, string>>;
  /** Node's own flags for both processes, before the bundle (e.g. `--import` of a bench-only probe). */
  readonly nodeArgs?: readonly string[];
}

/** The split deployment the HTTP suites measure, up and answering. */
export interface SplitScene {
  readonly scratch: ScratchDatabase;
  readonly dataDir: string;
  readonly port: number;
  readonly key: string;
  readonly api: StartedNode;
  readonly worker: StartedNode;
  /** @veetbot/client on the api with the demo key. */
  readonly client: VeetbotClient;
  /** Stops both processes (SIGTERM, SIGKILL after 10 s), drops the database, removes the folder; once. */
  close(): Promise<void>;
}

/**
 * The split scene of the `http`, `gateway` and `restate` suites (issue 31 item 3): the built api
 * (`--api-only`, the demo key, no MCP servers) and worker processes under plain node, as
 * `pnpm start:api` / `start:worker` run them (docs/adr/0041), on a fresh PostgreSQL database and a
 * temporary data folder. Whatever fails on the way stops what was started.
 */
export async function startSplitScene(options: SplitSceneOptions): Promise<SplitScene> {
  const scratch = await scratchDatabase(serverUrl(), `veetbot_bench_${options.name}`);
  const dataDir = await mkdtemp(join(tmpdir(), `veetbot-bench-${options.name}-`));
  const started: StartedNode[] = [];
  let closing: Promise<void> | null = null;
  const close = () => (closing ??= stop());
  const stop = async () => {
    for (const s of started) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM');
    await Promise.race([Promise.all(started.map((s) => s.exited)), new Promise((r) => setTimeout(r, 10_000))]);
    for (const s of started) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    await scratch.drop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const operatorConfig = join(dataDir, 'operator.json');
    await writeFile(operatorConfig, JSON.stringify({ mcp: { servers: [] } }));
    const port = await freePort();
    const key = `vbk_bench_${randomBytes(16).toString('base64url')}`;
    const base = { ...options.env, DATABASE_URL: scratch.url, VEETBOT_DATA_DIR: dataDir };
    await buildApps();
    const nodeArgs = options.nodeArgs ?? [];
    const api = startNode(
      join(REPO, 'apps/api/dist/main.mjs'),
      ['--api-only'],
      { ...base, VEETBOT_PORT: String(port), VEETBOT_DEMO_API_KEY: key, VEETBOT_OPERATOR_CONFIG: operatorConfig },
      nodeArgs,
    );
    started.push(api);
    await api.waitFor(/veetbot listening on /);
    const worker = startNode(
      join(REPO, 'apps/worker/dist/main.mjs'),
      [],
      { ...base, ...options.workerEnv, VEETBOT_WORKER_PORT: '0' },
      nodeArgs,
    );
    started.push(worker);
    await worker.waitFor(/ started: /);
    const client = new VeetbotClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: key });
    return { scratch, dataDir, port, key, api, worker, client, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export function startNode(main: string, args: string[], env: Record<string, string>, nodeArgs: readonly string[] = []) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && !k.startsWith('VEETBOT_')));
  // The built bundle under plain node, as `pnpm start:api` / `start:worker` run it: the pid is the
  // node process itself, so its RSS is the process's.
  const child = spawn(process.execPath, [...nodeArgs, main, ...args], {
    cwd: REPO,
    env: { ...clean, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (text += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (text += d));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return {
    child,
    exited,
    /** Everything the process printed so far (stdout and stderr). */
    output: () => text,
    async waitFor(pattern: RegExp, timeoutMs = 90_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(text)) {
        if (child.exitCode !== null) throw new Error(`${main} exited ${child.exitCode}: ${text.trim().split('\n').slice(-3).join(' | ')}`);
        if (Date.now() > deadline) throw new Error(`${main} did not start within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

/** The bundles `pnpm start:api` and `start:worker` run, (re)built if older than their sources. */
export async function buildApps(): Promise<void> {
  await new Promise<void>((done, fail) => {
    execFile(process.execPath, ['scripts/build-apps.mjs', '--if-stale', 'api', 'worker'], { cwd: REPO }, (error) =>
      error === null ? done() : fail(error),
    );
  });
}

export function freePort(): Promise<number> {
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
