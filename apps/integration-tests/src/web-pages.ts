import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EgressDecision, EgressPolicy, ToolExecutionContext } from '@veetbot/ports';

/**
 * A real HTTP server on 127.0.0.1 serving the pages the web.fetch tests need (docs/adr/0078),
 * each route a handler. Hostile routes (a page that never ends, a gzip bomb) are written by the
 * tests themselves.
 */
export type PageHandler = (request: IncomingMessage, response: ServerResponse) => void;

export class WebPageServer {
  readonly #server: Server;
  readonly #routes = new Map<string, PageHandler>();
  readonly #open = new Set<ServerResponse>();
  /** Requests each path received. */
  readonly hits = new Map<string, number>();

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<WebPageServer> {
    const server = createServer();
    const pages = new WebPageServer(server);
    server.on('request', (request, response) => pages.#handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return pages;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  route(path: string, handler: PageHandler): string {
    this.#routes.set(path, handler);
    return `${this.origin}${path}`;
  }

  async close(): Promise<void> {
    for (const response of this.#open) response.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #handle(request: IncomingMessage, response: ServerResponse): void {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
    this.#open.add(response);
    response.on('close', () => this.#open.delete(response));
    const handler = this.#routes.get(path);
    if (handler === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
      return;
    }
    handler(request, response);
  }
}

export const html =
  (body: string, status = 200): PageHandler =>
  (_request, response) => {
    response.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  };

export const redirect =
  (location: string, status = 302): PageHandler =>
  (_request, response) => {
    response.writeHead(status, { location }).end();
  };

/**
 * The operator's test switch for exactly one origin: `origin` (the loopback test server) is
 * admitted at its address; every other URL — every redirect hop elsewhere — goes to `strict`,
 * the real policy, unchanged.
 */
export function admitOnly(origin: string, strict: EgressPolicy): EgressPolicy {
  return {
    checkStatic: (url) => strict.checkStatic(url),
    async check(url): Promise<EgressDecision> {
      const parsed = new URL(url);
      if (parsed.origin === origin) return { allowed: true, url: parsed, address: '127.0.0.1', family: 4 };
      return strict.check(url);
    },
  };
}

/** A ToolExecutionContext for calling a web tool directly: no workspace, no artifacts, no credentials. */
export function webToolContext(signal: AbortSignal = new AbortController().signal): ToolExecutionContext {
  return {
    invocationId: randomUUID(),
    callId: 'call_web_1',
    runId: randomUUID(),
    sessionId: randomUUID(),
    tenantId: 'tenant_web',
    principal: { tenant_id: 'tenant_web', principal_id: 'principal_web', scopes: [] },
    stepNumber: 1,
    attemptNumber: 1,
    idempotencyKey: 'b'.repeat(64),
    deadlineAt: new Date(Date.now() + 30_000),
    timeoutSeconds: 30,
    maximumOutputBytes: 131_072,
    target: { kind: 'web_provider', serverId: null, deviceId: null },
    workspace: null,
    artifacts: { write: () => Promise.reject(new Error('web tools write no artifacts')) },
    credentials: { resolve: () => Promise.reject(new Error('web tools resolve no credentials')) },
    cancellation: signal,
    markEffectSent: async () => {},
  };
}
