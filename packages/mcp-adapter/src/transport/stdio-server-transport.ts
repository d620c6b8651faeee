import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { isTier0EnvironmentName, synthesizedEnvironment } from '@veetbot/domain';
import type { SecretValue } from '@veetbot/ports';
import { LineTooLongError, McpAdapterError, NotDispatchedError } from '../errors';
import { loadMcpSdk, type McpSdk } from '../sdk';
import { killGroup, trackGroup, untrackGroup } from './process-groups';
import { StderrRing } from './stderr-ring';

export const DEFAULT_STDERR_MAX_BYTES = 64 * 1024;
export const DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024;
const DEFAULT_KILL_GRACE_MS = 2_000;

export interface StdioServerTransportOptions {
  readonly command: string;
  readonly args?: readonly string[];
  /** The one declared credential variable (the env scheme). Revealed only while the environment is built. */
  readonly credential?: { readonly name: string; readonly value: SecretValue };
  /**
   * The operator's literal, non-secret variables (McpServerConfig.env), added to the built
   * environment. Validation refuses tier-0 names when the configuration is written; the
   * transport refuses them again rather than trust that.
   */
  readonly environment?: Readonly<Record<string, string>>;
  /** PATH inside the child (default: the synthesized tier's). */
  readonly path?: string;
  /** Working folder (default: the private HOME). */
  readonly cwd?: string;
  readonly stderrMaxBytes?: number;
  readonly maxLineBytes?: number;
  /** How long a child has to exit after SIGTERM before its group is killed. */
  readonly killGraceMs?: number;
}

/**
 * § Authentication, "A stdio server's credential enters as environment, and the environment is
 * built": the SDK's StdioClientTransport merges HOME, LOGNAME, PATH, SHELL, TERM and USER from
 * the worker into every child (its DEFAULT_INHERITED_ENV_VARS), so this is the SDK's Transport
 * interface over our own spawn instead. The child gets the synthesized tier (PATH, a private
 * HOME, LANG=C.UTF-8, TZ=UTC), the operator's literal non-secret variables if it declared any,
 * plus at most the one declared credential variable — nothing from process.env (Hard gate 16). The credential never reaches argv. stderr goes to a bounded ring
 * buffer, never to the worker's stderr. Messages are newline-delimited JSON-RPC and one line
 * may hold at most `maxLineBytes`: past that the transport closes with LineTooLongError. The
 * child leads its own process group, and closing kills the group.
 */
export class StdioServerTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;

  readonly #options: StdioServerTransportOptions;
  readonly #maxLineBytes: number;
  readonly #stderr: StderrRing;
  #child: ChildProcessWithoutNullStreams | null = null;
  #home: string | null = null;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #closing: Promise<void> | null = null;
  #exited: Promise<void> | null = null;
  #closedNotified = false;
  /** The SDK's JSON-RPC message parser, set by start() (lines arrive only after it). */
  #parse: McpSdk['parseJSONRPCMessage'] | null = null;
  #failure: Error | null = null;

  constructor(options: StdioServerTransportOptions) {
    this.#options = options;
    this.#maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.#stderr = new StderrRing(options.stderrMaxBytes ?? DEFAULT_STDERR_MAX_BYTES);
  }

  /** The child's pid (its process group id), once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** What closed the transport when it was not asked to close (e.g. LineTooLongError). */
  get failure(): Error | null {
    return this.#failure;
  }

  /** The last bytes the child wrote to stderr, for an operator. Never sent to a model or an event. */
  stderrTail(): string {
    return this.#stderr.text();
  }

  get stderrBytesSeen(): number {
    return this.#stderr.totalBytes;
  }

  async start(): Promise<void> {
    // docs/adr/0048: the SDK (its message schema) is imported when a transport starts, not with
    // the module. Before the checks, so two starts still cannot both pass them.
    this.#parse = (await loadMcpSdk()).parseJSONRPCMessage;
    if (this.#child !== null || this.#closing !== null)
      throw new McpAdapterError('mcp.transport.started', 'This transport was already started.');
    const credential = this.#options.credential;
    if (credential !== undefined && isTier0EnvironmentName(credential.name)) {
      // Validation refuses this at write time; the transport refuses it again rather than trust that.
      throw new McpAdapterError('mcp.config.auth_name_tier0', 'An env scheme may not name a tier-0 environment variable.');
    }
    const literal = Object.entries(this.#options.environment ?? {});
    for (const [name] of literal) {
      if (isTier0EnvironmentName(name))
        throw new McpAdapterError('mcp.config.env_name_tier0', "A stdio server's env may not name a tier-0 environment variable.");
      if (credential !== undefined && name.toUpperCase() === credential.name.toUpperCase()) {
        throw new McpAdapterError('mcp.config.env_name_credential', "A stdio server's env may not name the credential variable.");
      }
    }
    const home = mkdtempSync(join(tmpdir(), 'veetbot-mcp-home-'));
    this.#home = home;
    const env = synthesizedEnvironment(home, this.#options.path);
    for (const [name, value] of literal) env[name] = value;
    if (credential !== undefined) {
      // § Authentication: "building a child environment", the other place a secret is revealed.
      // The connection's redactor was taught the value when it was resolved.
      env[credential.name] = credential.value.reveal();
    }
    const child = spawn(this.#options.command, [...(this.#options.args ?? [])], {
      env,
      cwd: this.#options.cwd ?? home,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      shell: false,
      windowsHide: true,
    });
    this.#child = child;
    this.#exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.stdout.on('data', (chunk: Buffer) => this.#onStdout(chunk));
    child.stderr.on('data', (chunk: Buffer) => this.#stderr.append(chunk));
    child.stdin.on('error', (error) => this.onerror?.(error));
    child.stdout.on('error', (error) => this.onerror?.(error));
    // A pipe with no 'error' listener would throw its failure at the process.
    child.stderr.on('error', () => undefined);
    child.once('exit', () => {
      // Whatever the server left behind in its group goes with it.
      if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
      // Normally 'close' follows at once; a descendant that left the group could hold the
      // pipes open, so do not wait for it forever.
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        this.#finish();
      }, 1_000).unref();
    });
    child.once('close', () => this.#finish());

    await new Promise<void>((resolve, reject) => {
      let spawned = false;
      child.once('spawn', () => {
        spawned = true;
        if (child.pid !== undefined) trackGroup(child.pid);
        resolve();
      });
      child.on('error', (error) => {
        if (spawned) return this.onerror?.(error);
        this.#finish();
        reject(new NotDispatchedError('mcp.transport.connect_failed', 'The server process could not be started.', error));
      });
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const child = this.#child;
    if (
      child === null ||
      this.#closing !== null ||
      this.#closedNotified ||
      child.exitCode !== null ||
      child.signalCode !== null ||
      !child.stdin.writable
    ) {
      throw new NotDispatchedError('mcp.transport.closed', 'The server process is not running.');
    }
    const line = `${JSON.stringify(message)}\n`;
    await new Promise<void>((resolve, reject) => {
      child.stdin.write(line, (error) => {
        if (error)
          reject(new McpAdapterError('mcp.transport.failed', 'Writing to the server process failed.', { retryable: true, cause: error }));
        else resolve();
      });
    });
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    const child = this.#child;
    if (child !== null && child.pid !== undefined && this.#exited !== null) {
      const pid = child.pid;
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin.end();
        killGroup(pid, 'SIGTERM');
        const graceful = await waitFor(this.#exited, this.#options.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
        if (!graceful) killGroup(pid, 'SIGKILL');
      }
      // Grandchildren that ignored SIGTERM, or outlived the leader, still hold the group.
      killGroup(pid, 'SIGKILL');
      await waitFor(this.#exited, DEFAULT_KILL_GRACE_MS);
    }
    this.#finish();
  }

  #onStdout(chunk: Buffer): void {
    if (this.#failure !== null) return;
    let start = 0;
    for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, i);
      if (this.#pendingBytes + piece.length > this.#maxLineBytes) {
        this.#fail(new LineTooLongError(this.#maxLineBytes));
        return;
      }
      const line = this.#pending.length === 0 ? piece : Buffer.concat([...this.#pending, piece]);
      this.#pending = [];
      this.#pendingBytes = 0;
      start = i + 1;
      this.#onLine(line);
      if (this.#failure !== null) return;
    }
    if (start < chunk.length) {
      this.#pendingBytes += chunk.length - start;
      if (this.#pendingBytes > this.#maxLineBytes) {
        this.#fail(new LineTooLongError(this.#maxLineBytes));
        return;
      }
      this.#pending.push(Buffer.from(chunk.subarray(start)));
    }
  }

  #onLine(raw: Buffer): void {
    const text = raw.toString('utf8').replace(/\r$/, '');
    if (text.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = this.#parse!(JSON.parse(text));
    } catch (cause) {
      // A malformed line is reported and skipped; its text is the server's and is not repeated.
      this.onerror?.(
        new McpAdapterError('mcp.transport.message_invalid', 'The server wrote a line that is not a JSON-RPC message.', { cause }),
      );
      return;
    }
    this.onmessage?.(message);
  }

  #fail(error: Error): void {
    this.#failure = error;
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#child?.stdout.pause();
    this.onerror?.(error);
    void this.close();
  }

  #finish(): void {
    const pid = this.#child?.pid;
    if (pid !== undefined) untrackGroup(pid);
    if (this.#home !== null) {
      rmSync(this.#home, { recursive: true, force: true });
      this.#home = null;
    }
    if (this.#closedNotified) return;
    this.#closedNotified = true;
    this.onclose?.();
  }
}

function waitFor(promise: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
