import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One tools/call as the server received it. */
export interface SeenCall {
  readonly id: unknown;
  readonly inputResponses: unknown;
  readonly requestState: unknown;
}

/**
 * A scripted 2026-07-28 MCP server over HTTP (plain JSON responses, no SDK), run as a real
 * server on loopback: `server/discover`; a tool `bare` whose result names no resultType; a tool `confirm`, whose call answers `input_required`
 * with an embedded `elicitation/create` and an opaque requestState — once (`rounds: 1`: the
 * retry completes with the inputResponses it got, as text) or on every round (`rounds:
 * 'forever'`).
 */
export class InputRequiredHttpServer {
  readonly calls: SeenCall[] = [];
  /** Deliberately awkward: spaces, quotes, unicode, JSON-looking — it must come back byte for byte. */
  readonly requestState = ' {"nonce":"ä✓"} \\u0000 ';
  rounds: 1 | 'forever' = 1;
  /** How many elicitation requests one input_required result embeds (ask, ask1, ask2, ...). */
  requests = 1;
  #server: Server | null = null;

  async start(): Promise<string> {
    this.#server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const message = JSON.parse(body) as { id?: unknown; method: string; params?: Record<string, unknown> };
        const answer = (result: Record<string, unknown>) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { resultType: 'complete', ...result } }));
        };
        if (message.id === undefined) {
          res.writeHead(202).end();
          return;
        }
        if (message.method === 'server/discover') {
          answer({
            ttlMs: 0,
            cacheScope: 'private',
            supportedVersions: ['2026-07-28'],
            capabilities: { tools: {} },
            serverInfo: { name: 'input-required', version: '1' },
          });
        } else if (message.method === 'tools/list') {
          answer({
            ttlMs: 0,
            cacheScope: 'private',
            tools: [
              { name: 'confirm', inputSchema: { type: 'object', properties: {} } },
              { name: 'bare', inputSchema: { type: 'object', properties: {} } },
            ],
          });
        } else if (message.method === 'tools/call') {
          const params = message.params ?? {};
          if (params.name === 'bare') {
            // A result that names no resultType (SEP-2322: the client assumes `complete`).
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'bare' }] } }));
            return;
          }
          this.calls.push({ id: message.id, inputResponses: params.inputResponses, requestState: params.requestState });
          if (this.rounds === 'forever' || params.inputResponses === undefined) {
            answer({
              resultType: 'input_required',
              inputRequests: Object.fromEntries(
                Array.from({ length: this.requests }, (_, i) => [
                  i === 0 ? 'ask' : `ask${i}`,
                  {
                    method: 'elicitation/create',
                    params: {
                      message: 'Proceed?',
                      requestedSchema: { type: 'object', properties: { confirmed: { type: 'boolean', default: false } } },
                    },
                  },
                ]),
              ),
              requestState: this.requestState,
            });
          } else {
            answer({ content: [{ type: 'text', text: JSON.stringify(params.inputResponses) }] });
          }
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } }));
        }
      });
    });
    await new Promise<void>((done) => this.#server!.listen(0, '127.0.0.1', done));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/mcp`;
  }

  stop(): Promise<void> {
    return new Promise((done) => (this.#server === null ? done() : this.#server.close(() => done())));
  }
}
