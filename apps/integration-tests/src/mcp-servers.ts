import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Starting and stopping the scripted MCP servers of servers/ as REAL child processes
 * (`node --import tsx <file>`), so a dropped connection is a process that really closed its
 * socket or exited, never a mocked exception (Hard gate 12).
 */

export const SERVERS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'servers');
export const SCRIPTABLE_HTTP_SERVER = join(SERVERS_DIR, 'scriptable-http-server.ts');
export const ECHO_ENV_SERVER = join(SERVERS_DIR, 'echo-env-server.ts');
export const STDIO_DROP_SERVER = join(SERVERS_DIR, 'stdio-drop-server.ts');
export const HOSTILE_HTTP_SERVER = join(SERVERS_DIR, 'hostile-http-server.ts');
/** A 2026-07-28 server on the SDK's 2.x server package (docs/adr/0044). */
export const MODERN_HTTP_SERVER = join(SERVERS_DIR, 'modern-http-server.ts');

/**
 * The tsx loader as an absolute file URL: a child started with a built environment and an
 * unknown working directory must still find it.
 */
export const TSX_LOADER_URL = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** How a stdio server is started: an absolute command and its arguments (no shell). */
export function stdioCommand(file: string): { readonly command: string; readonly args: string[] } {
  return { command: process.execPath, args: ['--import', TSX_LOADER_URL, file] };
}

const started = new Set<ChildProcess>();

export interface JournalEntry {
  readonly seq: number;
  readonly httpMethod: string;
  readonly rpcMethod: string | null;
  readonly tool: string | null;
  readonly authorization: 'present' | 'absent';
  readonly session: 'present' | 'absent';
  /** The W3C trace context the request carried: its `traceparent` header and `params._meta.traceparent`. */
  readonly traceparent: { readonly header: string | null; readonly meta: string | null };
  readonly status: number | null;
}

export interface Counts {
  readonly calls: Record<string, number>;
  readonly initialize: number;
  /** MCP sessions initialized and not yet terminated: how many clients hold a session right now. */
  readonly open: number;
}

export type ControlAction =
  | { readonly action: 'require_token'; readonly token: string | null }
  | { readonly action: 'fail_next_calls'; readonly count: number }
  | { readonly action: 'fail_initialize'; readonly enabled: boolean }
  | {
      readonly action: 'set_tools';
      readonly add?: readonly { name: string; description: string; inputSchema: Record<string, unknown> }[];
      readonly remove?: readonly string[];
      readonly notify?: boolean;
    }
  | { readonly action: 'list_changed' }
  | { readonly action: 'reset_counts' }
  | { readonly action: 'shutdown' };

export class ScriptableHttpServer {
  #child: ChildProcess;
  #port: number;
  readonly #token: string | null;

  private constructor(child: ChildProcess, port: number, token: string | null) {
    this.#child = child;
    this.#port = port;
    this.#token = token;
  }

  /** Start the server on 127.0.0.1 (a random port unless one is given) and wait until it listens. */
  static async start(options: { token?: string; port?: number } = {}): Promise<ScriptableHttpServer> {
    const { child, port } = await launch(options.port ?? 0, options.token ?? null);
    return new ScriptableHttpServer(child, port, options.token ?? null);
  }

  get port(): number {
    return this.#port;
  }

  get pid(): number {
    return this.#child.pid ?? -1;
  }

  /** The MCP endpoint. */
  get url(): string {
    return `http://127.0.0.1:${this.#port}/mcp`;
  }

  get running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Resolves when the process has exited (at once when it already has). */
  exited(): Promise<void> {
    return exitOf(this.#child);
  }

  /** Start a fresh process on the same port (after a drop_connection exit, or a stop). */
  async restart(): Promise<void> {
    if (this.running) await this.stop();
    const { child } = await launch(this.#port, this.#token);
    this.#child = child;
  }

  async stop(): Promise<void> {
    await stopChild(this.#child);
  }

  async control(action: ControlAction): Promise<unknown> {
    const response = await fetch(`http://127.0.0.1:${this.#port}/__control`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(action),
    });
    if (!response.ok) throw new Error(`control ${action.action} answered ${response.status}`);
    return response.json();
  }

  async counts(): Promise<Counts> {
    const response = await fetch(`http://127.0.0.1:${this.#port}/__counts`);
    return (await response.json()) as Counts;
  }

  async journal(): Promise<JournalEntry[]> {
    const response = await fetch(`http://127.0.0.1:${this.#port}/__journal`);
    return (await response.json()) as JournalEntry[];
  }
}

async function launch(port: number, token: string | null): Promise<{ child: ChildProcess; port: number }> {
  const args = ['--port', String(port)];
  if (token !== null) args.push('--token', token);
  const { child, ready } = await launchScript(SCRIPTABLE_HTTP_SERVER, args);
  return { child, port: ready.port as number };
}

/**
 * Start one of servers/*.ts as a real child process and wait for its first stdout line, a JSON
 * object with `ready: true` and a numeric `port`.
 */
export async function launchScript(
  file: string,
  args: readonly string[] = [],
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; ready: Record<string, unknown>; stderr: () => string }> {
  const name = basename(file);
  // The scripted server is a stand-in for someone else's system: it gets a minimal environment
  // of its own, not the test process's.
  const child = spawn(process.execPath, ['--import', TSX_LOADER_URL, file, ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
    // stdin stays open for the child's life: the server exits when it closes (no orphans even
    // when this process dies without running afterEach).
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  started.add(child);
  child.once('exit', () => started.delete(child));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < 65_536) stderr += chunk.toString('utf8');
  });
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => fail(new Error(`${name} did not start in 60 s: ${stderr}`)), 60_000);
    const fail = (error: Error): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const newline = buffered.indexOf('\n');
      if (newline < 0) return;
      clearTimeout(timer);
      try {
        const line = JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>;
        if (line.ready === true && typeof line.port === 'number') resolve(line);
        else fail(new Error(`unexpected first line: ${buffered.slice(0, newline)}`));
      } catch (error) {
        fail(error instanceof Error ? error : new Error(String(error)));
      }
    });
    child.once('exit', (code) => fail(new Error(`${name} exited (${code}) before it listened: ${stderr}`)));
  });
  // Keep draining stdout so the child can never block on a full pipe.
  child.stdout?.resume();
  return { child, ready, stderr: () => stderr };
}

/** servers/hostile-http-server.ts: one process, every scenario at its own path. */
export class HostileHttpServer {
  readonly #child: ChildProcess;
  readonly port: number;
  /** The other host its redirect points at. */
  readonly elsewhere: string;

  private constructor(child: ChildProcess, port: number, elsewhere: string) {
    this.#child = child;
    this.port = port;
    this.elsewhere = elsewhere;
  }

  static async start(): Promise<HostileHttpServer> {
    const { child, ready } = await launchScript(HOSTILE_HTTP_SERVER);
    return new HostileHttpServer(child, ready.port as number, String(ready.elsewhere));
  }

  /** The MCP endpoint that misbehaves as `scenario` says. */
  url(scenario: string): string {
    return `http://127.0.0.1:${this.port}/s/${scenario}/mcp`;
  }

  /** Requests the redirect target has received (it must receive none). */
  async elsewhereHits(): Promise<number> {
    const response = await fetch(`http://127.0.0.1:${this.port}/__elsewhere`);
    return ((await response.json()) as { hits: number }).hits;
  }

  stop(): Promise<void> {
    return stopChild(this.#child);
  }
}

function exitOf(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = exitOf(child);
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
}

/** afterEach: every server process this harness started is stopped; none outlives its test. */
export async function stopAllServers(): Promise<void> {
  await Promise.all([...started].map((child) => stopChild(child)));
  killStrayServerChildren();
}

/**
 * A safety net for stdio servers the ADAPTER started (children of this process running one of
 * our server files): if a test failed before the adapter shut down, they are killed by pid here
 * so no orphan survives the test file. Linux only (/proc); elsewhere a no-op.
 */
export function killStrayServerChildren(): number[] {
  const killed: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return killed;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Field 4 (after the parenthesised command name) is the parent pid.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!cmdline.includes(SERVERS_DIR)) continue;
      process.kill(Number(entry), 'SIGKILL');
      killed.push(Number(entry));
    } catch {
      // The process went away while we looked: nothing to do.
    }
  }
  return killed;
}

/** Poll until `check` holds (or throw after `timeoutMs`). */
export async function waitFor<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
