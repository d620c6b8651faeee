import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ModernTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  /** The tools/call result (without resultType); default: one text block. */
  result?: (args: Record<string, unknown>) => Record<string, unknown>;
}

/** One POST the server received: its JSON-RPC method, every header as node:http parsed it, and its params. */
export interface ModernRequest {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: readonly string[];
  readonly params: Record<string, unknown> | undefined;
}

/**
 * A scripted MCP server over Streamable HTTP at protocol revision 2026-07-28 (stateless:
 * `server/discover`, then requests whose results carry `resultType`), run as a real HTTP server
 * on loopback. It records every request's headers as they arrived on the wire, so a test sees
 * exactly what the adapter sent (SEP-2243's Mcp-Param-* headers). `revision: '2025-11-25'`
 * answers the discover probe with -32601 and serves the 2025 `initialize` handshake instead.
 */
export class ModernHttpServer {
  tools: ModernTool[] = [];
  revision: '2026-07-28' | '2025-11-25' = '2026-07-28';
  readonly requests: ModernRequest[] = [];
  #server: Server | null = null;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  calls(method: string): ModernRequest[] {
    return this.requests.filter((r) => r.method === method);
  }

  async start(): Promise<this> {
    this.#server = createServer((req, res) => void this.#handle(req, res));
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server!.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (server === null) return;
    this.#server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET') return void res.writeHead(405).end();
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    const body = await new Promise<string>((resolve) => {
      let data = '';
      req.on('data', (c: Buffer) => (data += c.toString('utf8')));
      req.on('end', () => resolve(data));
    });
    const message = JSON.parse(body) as { id?: number | string; method: string; params?: Record<string, unknown> };
    this.requests.push({ method: message.method, headers: req.headers, rawHeaders: req.rawHeaders, params: message.params });
    if (message.id === undefined) return void res.writeHead(202).end();
    const modern = this.revision === '2026-07-28';
    const complete = (result: Record<string, unknown>) => (modern ? { resultType: 'complete', ...result } : result);
    let answer: { result: unknown } | { error: { code: number; message: string } };
    switch (message.method) {
      case 'server/discover':
        answer = modern
          ? {
              result: complete({
                ttlMs: 0,
                cacheScope: 'private',
                supportedVersions: ['2026-07-28'],
                capabilities: { tools: {} },
                serverInfo: { name: 'modern-scripted', version: '1' },
              }),
            }
          : { error: { code: -32601, message: 'Method not found' } };
        break;
      case 'initialize':
        answer = {
          result: {
            protocolVersion: message.params?.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: 'legacy-scripted', version: '1' },
          },
        };
        break;
      case 'tools/list':
        answer = {
          result: complete({
            ...(modern ? { ttlMs: 0, cacheScope: 'private' } : {}),
            tools: this.tools.map(({ result: _r, ...t }) => t),
          }),
        };
        break;
      case 'tools/call': {
        const tool = this.tools.find((t) => t.name === message.params?.name);
        const args = (message.params?.arguments ?? {}) as Record<string, unknown>;
        answer = {
          result: complete(tool?.result?.(args) ?? { content: [{ type: 'text', text: `called ${String(message.params?.name)}` }] }),
        };
        break;
      }
      default:
        answer = { error: { code: -32601, message: 'Method not found' } };
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...answer }));
  }
}

/** A header value as SEP-2243 encodes it: plain, or `=?base64?…?=` around the UTF-8 bytes. */
export function decodeParamHeader(value: string | string[] | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^=\?base64\?(.*)\?=$/.exec(value);
  return m === null ? value : Buffer.from(m[1]!, 'base64').toString('utf8');
}
