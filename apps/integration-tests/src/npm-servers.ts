import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import type { McpServerConfig } from '@veetbot/mcp-adapter';
import { httpServer } from './mcp-harness';

/**
 * Real MCP servers from npm (devDependencies of this app, exact versions pinned in
 * package.json), started as real processes: by the adapter over stdio (an operator stdio
 * server whose command is this Node and the package's entry file), or by the test over
 * Streamable HTTP. They are someone else's code; nothing here imports them.
 */

const require = createRequire(import.meta.url);

function entryOf(name: string): string {
  return join(dirname(require.resolve(`${name}/package.json`)), 'dist', 'index.js');
}

export const NPM_SERVER_ENTRIES = {
  everything: entryOf('@modelcontextprotocol/server-everything'),
  filesystem: entryOf('@modelcontextprotocol/server-filesystem'),
  memory: entryOf('@modelcontextprotocol/server-memory'),
} as const;

/** An operator stdio server running an npm package's entry file with this Node (no shell, no npx). */
export function npmStdioServer(
  serverId: string,
  entry: string,
  args: readonly string[],
  over: Partial<McpServerConfig> = {},
): McpServerConfig {
  // A generous connect timeout: starting someone else's server on a loaded two-core test
  // machine can take longer than the platform's 10 s default, which is not what is under test.
  return httpServer(serverId, process.execPath, { transport: 'stdio', args: [entry, ...args], connectTimeoutSeconds: 60, ...over });
}

/**
 * A port free on every interface: server-everything takes its port only from PORT and listens
 * on all interfaces, so the probe binds the wildcard address; the tests then dial loopback.
 */
export async function freeWildcardPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, resolve);
  });
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** server-everything over Streamable HTTP (`PORT=… node dist/index.js streamableHttp`). */
export class EverythingHttpServer {
  readonly #child: ChildProcess;
  readonly port: number;

  private constructor(child: ChildProcess, port: number) {
    this.#child = child;
    this.port = port;
  }

  static async start(): Promise<EverythingHttpServer> {
    const port = await freeWildcardPort();
    // Its own minimal environment: a stand-in for someone else's deployment, not a child of ours.
    const child = spawn(process.execPath, [NPM_SERVER_ENTRIES.everything, 'streamableHttp'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => fail(new Error(`server-everything (http) did not listen in 60 s: ${stderr}`)), 60_000);
      const fail = (error: Error) => {
        clearTimeout(timer);
        child.kill('SIGKILL');
        reject(error);
      };
      child.stderr!.on('data', (chunk: Buffer) => {
        if (stderr.length < 16_384) stderr += chunk.toString('utf8');
        if (stderr.includes(`listening on port ${port}`)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => fail(new Error(`server-everything (http) exited (${code}) before it listened: ${stderr}`)));
    });
    child.stderr!.resume();
    return new EverythingHttpServer(child, port);
  }

  /** The MCP endpoint, on loopback. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  config(serverId: string, over: Partial<McpServerConfig> = {}): McpServerConfig {
    return httpServer(serverId, this.url, { connectTimeoutSeconds: 60, ...over });
  }

  async stop(): Promise<void> {
    const child = this.#child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }
}
