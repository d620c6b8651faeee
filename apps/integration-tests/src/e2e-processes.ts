import { logMessages } from '@veetbot/telemetry';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createDatabase, dropDatabase } from '@veetbot/store-postgres';

/**
 * The end-to-end scene (issue 5, Proofs): the REAL api (`apps/api/src/main.ts --api-only`) and
 * worker (`apps/worker/src/main.ts`) processes on a fresh PostgreSQL database of their own and
 * one shared data folder (blobs, workspaces, outbox.log). Tests reach them only over HTTP
 * (@veetbot/client) and by their signals.
 */
export const REPO = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const API_MAIN = join(REPO, 'apps/api/src/main.ts');
const WORKER_MAIN = join(REPO, 'apps/worker/src/main.ts');
/** The production bundles (docs/adr/0041): `pnpm start:api` / `start:worker` run these. */
const API_BUNDLE = join(REPO, 'apps/api/dist/main.mjs');
const WORKER_BUNDLE = join(REPO, 'apps/worker/dist/main.mjs');
const execFileAsync = promisify(execFile);

/** What `pnpm start:api` and `start:worker` do first: rebuild a bundle older than its sources. */
export async function buildApps(): Promise<void> {
  await execFileAsync(process.execPath, ['scripts/build-apps.mjs', '--if-stale', 'api', 'worker'], { cwd: REPO });
}

export interface Started {
  readonly child: ChildProcess;
  /** What the process said: its log lines' messages (logMessages). */
  readonly output: () => string;
  /** Its stdout and stderr as written: JSON log lines. */
  readonly raw: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A process with this environment only (no DATABASE_URL or VEETBOT_* leaks from the test's). */
export function startNode(args: readonly string[], env: Record<string, string>): Started {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && !k.startsWith('VEETBOT_')));
  const child = spawn(process.execPath, [...args], { cwd: REPO, env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (text += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (text += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  return { child, output: () => logMessages(text), raw: () => text, exited };
}

export { logMessages };

export async function waitForOutput(started: Started, pattern: RegExp, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(started.output())) {
    if (started.child.exitCode !== null || started.child.signalCode !== null)
      throw new Error(`exited before ${pattern}:\n${started.output()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}:\n${started.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms (last: ${JSON.stringify(value).slice(0, 500)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
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

export interface E2eScene {
  /** The fresh database's URL (the test may open it to provision a second tenant). */
  readonly url: string;
  readonly dataDir: string;
  readonly baseUrl: string;
  /** The demo tenant's key (VEETBOT_DEMO_API_KEY), scopes as the embedded default grants. */
  readonly demoKey: string;
  /** The api process now running (a new one after `restartApi`). */
  readonly api: Started;
  readonly workers: Started[];
  startWorker(env?: Record<string, string>): Promise<Started>;
  /** Start a new api process on the same port (the old one must have exited); resolves once it listens. */
  restartApi(): Promise<Started>;
  outboxLines(): Promise<string[]>;
  close(): Promise<void>;
}

/** The operations port a worker-only process printed (`worker operations: http://127.0.0.1:N/metrics…`). */
export function workerOperationsUrl(worker: Started): string {
  const port = /worker operations: http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(worker.output())?.[1];
  if (port === undefined) throw new Error(`the worker printed no operations port:\n${worker.output()}`);
  return `http://127.0.0.1:${port}`;
}

async function writeOperatorConfig(dataDir: string, operatorConfig: Record<string, unknown> | undefined): Promise<void> {
  // By default no operator MCP servers: these tests are about the api and worker, not
  // server-everything. The file is at the default place (`<data dir>/operator.json`), where
  // every process finds it without being told (ADR 0022).
  await writeFile(join(dataDir, 'operator.json'), JSON.stringify(operatorConfig ?? { mcp: { servers: [] } }));
}

export interface EmbeddedScene {
  readonly dataDir: string;
  readonly baseUrl: string;
  /** The demo tenant's key (VEETBOT_DEMO_API_KEY). */
  readonly demoKey: string;
  /** The one process of `pnpm start` (role `both`: the api and the worker loop, on PGlite). */
  readonly process: Started;
  close(): Promise<void>;
}

/**
 * `pnpm start` as the README starts it without DATABASE_URL: one process in the `both` role on
 * PGlite in a fresh data folder (PGlite is one process, so the api and the worker share it).
 */
export async function startEmbeddedScene(options: { operatorConfig?: Record<string, unknown> } = {}): Promise<EmbeddedScene> {
  const dataDir = await mkdtemp(join(tmpdir(), 'veetbot-embedded-'));
  await writeOperatorConfig(dataDir, options.operatorConfig);
  const port = await freePort();
  const demoKey = `vbk_e2e_${randomBytes(16).toString('base64url')}`;
  // The production bundle, as `pnpm start` runs it (see startScene's `built`).
  await buildApps();
  const started = startNode([API_BUNDLE], {
    VEETBOT_DATA_DIR: dataDir,
    VEETBOT_PORT: String(port),
    VEETBOT_DEMO_API_KEY: demoKey,
    VEETBOT_WORKER_POLL_MS: '200',
  });
  const close = async () => {
    if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGKILL');
    await started.exited;
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await waitForOutput(started, / started: /);
    await waitForOutput(started, /veetbot listening on /);
  } catch (error) {
    await close();
    throw error;
  }
  return { dataDir, baseUrl: `http://127.0.0.1:${port}`, demoKey, process: started, close };
}

/** A fresh database, the api process (--api-only) and `workers` worker processes, all ready. */
export async function startScene(options: {
  workers: number;
  workerEnv?: Record<string, string>;
  /** More environment for the api process (tracing's OTEL_* variables). */
  apiEnv?: Record<string, string>;
  operatorConfig?: Record<string, unknown>;
  /**
   * false: tsx on the sources instead of the production bundles (`node apps/<app>/dist/main.mjs`,
   * rebuilt first when older than their sources). The bundles are the default: they are what
   * `pnpm start:*` runs, and a process starts on half the CPU time tsx needs (about 1.8 s against
   * 3.8 s, measured), which CI's two cores pay for every process a test starts.
   */
  built?: boolean;
  /** The server the fresh database is made on; default DATABASE_URL. */
  serverUrl?: string;
}): Promise<E2eScene> {
  const serverUrl = options.serverUrl ?? process.env.DATABASE_URL;
  if (!serverUrl) throw new Error('DATABASE_URL is not set');
  const built = options.built !== false;
  if (built) await buildApps();
  const apiArgs = built ? [API_BUNDLE, '--api-only'] : ['--import', 'tsx', API_MAIN, '--api-only'];
  const workerArgs = built ? [WORKER_BUNDLE] : ['--import', 'tsx', WORKER_MAIN];
  const name = `veetbot_e2e_${randomBytes(6).toString('hex')}`;
  const url = await createDatabase(serverUrl, name);
  const dataDir = await mkdtemp(join(tmpdir(), 'veetbot-e2e-'));
  // A root worker's sandbox runs as an unprivileged host user: the data folder must be
  // traversable (docs/adr/0037), or neither process offers the sandbox tools.
  await chmod(dataDir, 0o711);
  await writeOperatorConfig(dataDir, options.operatorConfig);
  const port = await freePort();
  const demoKey = `vbk_e2e_${randomBytes(16).toString('base64url')}`;
  const children: Started[] = [];
  const startApi = () => {
    const started = startNode(apiArgs, {
      DATABASE_URL: url,
      VEETBOT_DATA_DIR: dataDir,
      VEETBOT_PORT: String(port),
      VEETBOT_DEMO_API_KEY: demoKey,
      ...options.apiEnv,
    });
    children.push(started);
    return started;
  };
  let api = startApi();
  const workers: Started[] = [];
  const startWorker = async (env: Record<string, string> = {}): Promise<Started> => {
    const worker = startNode(workerArgs, {
      DATABASE_URL: url,
      VEETBOT_DATA_DIR: dataDir,
      VEETBOT_WORKER_POLL_MS: '200',
      VEETBOT_WORKER_SWEEP_MS: '1000',
      // Several workers on one machine: each its own free operations port.
      VEETBOT_WORKER_PORT: '0',
      ...options.workerEnv,
      ...env,
    });
    children.push(worker);
    workers.push(worker);
    await waitForOutput(worker, / started: /);
    return worker;
  };
  const close = async () => {
    for (const child of children) if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    await dropDatabase(serverUrl, name).catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    // The api migrates first (its advisory lock serialises the workers' migrate after it).
    await waitForOutput(api, /veetbot listening on /);
    for (let i = 0; i < options.workers; i++) await startWorker();
  } catch (error) {
    await close();
    throw error;
  }
  const restartApi = async (): Promise<Started> => {
    api = startApi();
    await waitForOutput(api, /veetbot listening on /);
    return api;
  };
  return {
    url,
    dataDir,
    baseUrl: `http://127.0.0.1:${port}`,
    demoKey,
    get api() {
      return api;
    },
    workers,
    startWorker,
    restartApi,
    outboxLines: async () => (await readFile(join(dataDir, 'outbox.log'), 'utf8').catch(() => '')).split('\n').filter((l) => l !== ''),
    close,
  };
}
