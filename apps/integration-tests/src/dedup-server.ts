import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { McpServerConfig } from '@veetbot/mcp-adapter';
import { httpServer, stdioServer } from './mcp-harness';
import { launchScript, SERVERS_DIR } from './mcp-servers';

/**
 * servers/dedup-server.ts from a test: a scripted MCP server that deduplicates by the
 * application idempotency key (docs/adr/0066) and records what it received, as a real process
 * (HTTP, started here; stdio, started by the adapter from its configuration). Its state is
 * files in a folder of its own, read here directly.
 */
export const DEDUP_SERVER = path.join(SERVERS_DIR, 'dedup-server.ts');

export interface ReceivedMessage {
  readonly method: string | null;
  readonly tool?: string | null;
  readonly arguments?: Record<string, unknown> | null;
  /** `_meta["io.veetbot/idempotency_key"]`, as received. */
  readonly meta_key: unknown;
  /** The `Idempotency-Key` header, as received (always null over stdio). */
  readonly header_key: string | null;
  /** 401: refused before it was handled. */
  readonly status?: number;
  readonly transport: 'http' | 'stdio';
}

export interface AppliedEffect {
  readonly key: string | null;
  readonly title: string;
  readonly ticket: number;
}

export interface DedupScript {
  create?: 'answer' | 'hold' | 'exit_before_apply' | 'exit_after_apply';
  lookups?: string[];
  unauthorized_calls?: number;
  token?: string;
}

export class DedupServer {
  readonly stateDir: string;
  #child: ChildProcess | null = null;
  #port = 0;
  readonly #token: string | null;

  private constructor(stateDir: string, token: string | null) {
    this.stateDir = stateDir;
    this.#token = token;
  }

  /** A state folder only: the adapter starts the stdio process itself (see `stdioConfig`). */
  static async stdio(): Promise<DedupServer> {
    return new DedupServer(await mkdtemp(path.join(tmpdir(), 'veetbot-dedup-')), null);
  }

  /** An HTTP server process on 127.0.0.1. */
  static async http(options: { token?: string } = {}): Promise<DedupServer> {
    const server = new DedupServer(await mkdtemp(path.join(tmpdir(), 'veetbot-dedup-')), options.token ?? null);
    await server.start();
    return server;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}/mcp`;
  }

  get running(): boolean {
    return this.#child !== null && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** (Re)starts the HTTP process on the same port, the same state. */
  async start(): Promise<void> {
    const args = ['--transport', 'http', '--state', this.stateDir, '--port', String(this.#port)];
    if (this.#token !== null) args.push('--token', this.#token);
    const { child, ready } = await launchScript(DEDUP_SERVER, args);
    this.#child = child;
    this.#port = ready.port as number;
  }

  httpConfig(serverId: string, over: Partial<McpServerConfig> = {}): McpServerConfig {
    return httpServer(serverId, this.url, {
      sideEffect: 'external_write',
      risk: 'medium',
      idempotency: 'conditionally_idempotent',
      ...over,
    });
  }

  stdioConfig(serverId: string, over: Partial<McpServerConfig> = {}): McpServerConfig {
    return stdioServer(serverId, DEDUP_SERVER, {
      args: [...stdioServer(serverId, DEDUP_SERVER).args!, '--transport', 'stdio', '--state', this.stateDir],
      sideEffect: 'external_write',
      risk: 'medium',
      idempotency: 'conditionally_idempotent',
      ...over,
    });
  }

  async script(script: DedupScript): Promise<void> {
    await writeFile(path.join(this.stateDir, 'script.json'), JSON.stringify(script));
  }

  received(): Promise<ReceivedMessage[]> {
    return lines<ReceivedMessage>(path.join(this.stateDir, 'received.jsonl'));
  }

  effects(): Promise<AppliedEffect[]> {
    return lines<AppliedEffect>(path.join(this.stateDir, 'effects.jsonl'));
  }

  async stop(): Promise<void> {
    const child = this.#child;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  async dispose(): Promise<void> {
    await this.stop();
    await rm(this.stateDir, { recursive: true, force: true });
  }
}

async function lines<T>(file: string): Promise<T[]> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as T);
}
