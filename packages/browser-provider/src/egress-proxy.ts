import { createServer, type IncomingMessage, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { BrowserBlockedRequest } from '@veetbot/ports';
import type { DestinationCheck } from './destination';

/** What one browser's proxy allows (docs/adr/0079). */
export interface EgressProxyLimits {
  /** Bytes received from upstreams over the browser's life; past it every connection is cut. */
  readonly transferBytes: number;
  /** Connections open at once. */
  readonly connections: number;
  /** Refusals kept for the next tool result; older ones are counted as truncated. */
  readonly blockedEntries: number;
}

export const DEFAULT_PROXY_LIMITS: EgressProxyLimits = {
  transferBytes: 64 * 1024 * 1024,
  connections: 64,
  blockedEntries: 16,
};

const DESTINATION_MAX_CHARS = 255;
const CONNECT_TIMEOUT_MS = 10_000;
const IDLE_TIMEOUT_MS = 60_000;
/** Request headers that belong to the hop to the proxy, never forwarded. */
const HOP_HEADERS = new Set(['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive', 'te', 'trailer', 'upgrade']);

/**
 * The browser's only way out (docs/adr/0079): an HTTP proxy on a unix socket the host owns,
 * bind-mounted into the sandbox. Every request — a navigation, a subresource, a websocket, a
 * CONNECT tunnel — is judged by the DestinationCheck and dialled at the one address it pinned.
 * A refusal is recorded (bounded) for the tool result and answered 403; the page sees a failed load.
 */
export class EgressProxy {
  readonly #check: DestinationCheck;
  readonly #limits: EgressProxyLimits;
  readonly #server: Server;
  readonly #sockets = new Set<Duplex>();
  #blocked: BrowserBlockedRequest[] = [];
  #blockedTruncated = false;
  #received = 0;
  #exhausted = false;

  constructor(check: DestinationCheck, limits: EgressProxyLimits = DEFAULT_PROXY_LIMITS) {
    this.#check = check;
    this.#limits = limits;
    this.#server = createServer({ maxHeaderSize: 16_384, requestTimeout: IDLE_TIMEOUT_MS });
    this.#server.maxConnections = limits.connections;
    this.#server.on('connection', (socket: Socket) => this.#track(socket));
    this.#server.on('request', (req: IncomingMessage, res: ServerResponse) => void this.#plain(req, res));
    this.#server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.#tunnel(req, socket, head));
    this.#server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.#upgrade(req, socket, head));
    this.#server.on('clientError', (_error, socket: Duplex) => socket.destroy());
  }

  listen(socketPath: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(socketPath, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
  }

  /** The refusals since the last call, and whether some were dropped to the bound. */
  drainBlocked(): { readonly blocked: readonly BrowserBlockedRequest[]; readonly truncated: boolean } {
    const drained = { blocked: this.#blocked, truncated: this.#blockedTruncated };
    this.#blocked = [];
    this.#blockedTruncated = false;
    return drained;
  }

  /** The refusals so far, without draining them. */
  peekBlocked(): readonly BrowserBlockedRequest[] {
    return [...this.#blocked];
  }

  get receivedBytes(): number {
    return this.#received;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #track(socket: Duplex): void {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  }

  #refuse(destination: string, code: string): void {
    if (this.#blocked.length >= this.#limits.blockedEntries) {
      this.#blockedTruncated = true;
      return;
    }
    this.#blocked.push({ destination: destination.slice(0, DESTINATION_MAX_CHARS), code });
  }

  /** Counts upstream bytes; past the budget, cuts everything (a download bomb ends here). */
  #count(chunk: Buffer): boolean {
    this.#received += chunk.length;
    if (this.#received <= this.#limits.transferBytes) return true;
    if (!this.#exhausted) {
      this.#exhausted = true;
      this.#refuse('*', 'browser.transfer_limit');
    }
    for (const socket of this.#sockets) socket.destroy();
    return false;
  }

  async #plain(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = req.url ?? '';
    const destination = describe(target);
    if (this.#exhausted) return void forbid(res);
    const decision = await this.#check.checkUrl(target);
    if (!decision.allowed) {
      this.#refuse(destination, decision.code);
      return void forbid(res);
    }
    const url = new URL(target);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && !HOP_HEADERS.has(name)) headers[name] = value;
    headers.connection = 'close';
    const upstream = httpRequest({
      host: decision.address,
      port: decision.port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
      timeout: CONNECT_TIMEOUT_MS,
    });
    upstream.on('socket', (s: Socket) => this.#track(s));
    upstream.on('timeout', () => upstream.destroy());
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { connection: 'close' });
      res.end();
    });
    upstream.on('response', (answer) => {
      const forwarded: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers))
        if (value !== undefined && !HOP_HEADERS.has(name)) forwarded[name] = value;
      forwarded.connection = 'close';
      res.writeHead(answer.statusCode ?? 502, forwarded);
      answer.on('data', (chunk: Buffer) => {
        if (this.#count(chunk)) res.write(chunk);
      });
      answer.on('end', () => res.end());
      answer.on('error', () => res.destroy());
    });
    req.pipe(upstream);
  }

  async #tunnel(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    this.#track(socket);
    const authority = req.url ?? '';
    if (this.#exhausted) return void reject(socket);
    const decision = await this.#check.checkTunnel(authority);
    if (!decision.allowed) {
      this.#refuse(authority, decision.code);
      return void reject(socket);
    }
    this.#splice(socket, decision.address, decision.port, 'HTTP/1.1 200 Connection Established\r\n\r\n', head);
  }

  async #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    this.#track(socket);
    const target = req.url ?? '';
    if (this.#exhausted) return void reject(socket);
    const decision = await this.#check.checkUrl(target);
    if (!decision.allowed) {
      this.#refuse(describe(target), decision.code);
      return void reject(socket);
    }
    const url = new URL(target);
    const lines = [`${req.method ?? 'GET'} ${url.pathname}${url.search} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!;
      if (name.toLowerCase() === 'proxy-connection' || name.toLowerCase() === 'proxy-authorization') continue;
      lines.push(`${name}: ${req.rawHeaders[i + 1]!}`);
    }
    const requestHead = Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), head]);
    this.#splice(socket, decision.address, decision.port, null, requestHead);
  }

  /** Dial the pinned address and join the two sockets, counting what comes back. */
  #splice(client: Duplex, address: string, port: number, established: string | null, first: Buffer): void {
    const upstream = connect({ host: address, port });
    this.#track(upstream);
    upstream.setTimeout(CONNECT_TIMEOUT_MS, () => upstream.destroy());
    upstream.once('connect', () => {
      upstream.setTimeout(IDLE_TIMEOUT_MS);
      if (established !== null) client.write(established);
      if (first.length > 0) upstream.write(first);
      client.pipe(upstream);
      upstream.on('data', (chunk: Buffer) => {
        if (this.#count(chunk)) client.write(chunk);
      });
    });
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('error', () => {
      if (established !== null && !client.destroyed && upstream.bytesRead === 0) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      else client.destroy();
    });
  }
}

function describe(target: string): string {
  try {
    const url = new URL(target);
    return url.port === '' ? url.hostname : `${url.hostname}:${url.port}`;
  } catch {
    return '(unparsable)';
  }
}

function forbid(res: ServerResponse): void {
  res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
  res.end('Refused by the platform egress policy.\n');
}

function reject(socket: Duplex): void {
  socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
}
