/**
 * A hostile MCP server over Streamable HTTP, started by the tests as a real child process
 * (`node --import tsx hostile-http-server.ts`). It is a correct JSON-response MCP server (no
 * SDK: every byte on the wire is ours to bend) until the scenario in its URL says otherwise:
 *
 *   POST|GET|DELETE /s/{scenario}/mcp   the MCP endpoint, misbehaving as {scenario} says
 *   GET  /__elsewhere                   {hits}: requests the redirect target has received
 *
 * It listens twice: on 127.0.0.1 (the server) and on 127.0.0.2 (the "other host" its redirect
 * points at, which must never be dialled). On start it prints one JSON line on stdout:
 * {"ready":true,"port":N,"elsewhere":"http://127.0.0.2:M/"}.
 *
 * Scenarios (what reaches the client; ADR 0021 has the outcome each must end with):
 *   get_404_body           the standalone GET stream: 404 with a 1 MiB body, sent slowly
 *   notification_200_json  every notification: 200 application/json with a 1 MiB body
 *   data_after_json        tools/call: a complete JSON response, then garbage on the socket
 *   data_after_sse         tools/call: an SSE response event, then more events (an unknown id,
 *                          a non-JSON data line, a large comment) after it
 *   cut_json               tools/call: half a JSON body, then the socket is destroyed
 *   cut_sse                tools/call: half an SSE event, then the socket is destroyed
 *   too_large_json         tools/call: one valid JSON-RPC response of 5 MiB (over the 4 MiB cap)
 *   too_large_sse          tools/call: one SSE event of 5 MiB split into 1 KiB data lines
 *   slow_body              tools/call: a JSON body that trickles a byte at a time, forever
 *   invalid_json           tools/call: 200 application/json that is not JSON
 *   sse_no_response        tools/call: an SSE stream of keep-alive comments, never the response
 *   flood_sse              tools/call: an SSE stream of 200 MiB of 1 KiB notifications as fast as
 *                          the client reads, never the response (docs/adr/0025)
 *   redirect               tools/call: 307 to the other host
 *   huge_header            tools/call: a 64 KiB response header
 *   well_behaved           nothing: the control
 *   cut_initialize         initialize: half a JSON body, then the socket is destroyed
 *   too_large_list         tools/list: one response of 5 MiB
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HOSTILE_SCENARIOS as SCENARIOS, type HostileScenario as Scenario } from '../src/hostile-scenarios';
import { exitWithHarness } from './harness-lifetime';

const MIB = 1024 * 1024;
let elsewhereUrl = '';
let elsewhereHits = 0;

interface RpcMessage {
  readonly id?: string | number;
  readonly method?: string;
  readonly params?: Record<string, unknown>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    req.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
    req.on('end', () => resolve(data));
    req.on('error', () => resolve(data));
  });
}

/** The ordinary answer to a request (initialize, tools/list, tools/call). */
function resultOf(message: RpcMessage): unknown {
  switch (message.method) {
    case 'initialize':
      return {
        protocolVersion: message.params?.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'hostile-http-server', version: '1' },
      };
    case 'tools/list':
      return {
        tools: [
          {
            name: 'echo',
            description: 'Answers with its text.',
            inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
          },
        ],
      };
    case 'tools/call':
      return {
        content: [{ type: 'text', text: `echo ${String((message.params?.arguments as Record<string, unknown> | undefined)?.text ?? '')}` }],
      };
    default:
      return {};
  }
}

const rpc = (id: string | number, result: unknown): string => JSON.stringify({ jsonrpc: '2.0', id, result });

function json(res: ServerResponse, status: number, payload: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(payload)),
    'mcp-session-id': 'hostile',
    ...extra,
  });
  res.end(payload);
}

/** Writes `total` bytes of `fill` in 64 KiB pieces, honouring backpressure, then ends. */
function stream(res: ServerResponse, head: string, total: number, fill: string, tail: string, done?: () => void): void {
  let sent = 0;
  const piece = fill.repeat(Math.ceil((64 * 1024) / fill.length));
  const next = (): void => {
    if (res.destroyed) return;
    if (sent === 0) res.write(head);
    while (sent < total) {
      sent += piece.length;
      if (!res.write(piece)) return void res.once('drain', next);
    }
    res.end(tail);
    done?.();
  };
  next();
}

const sseEvent = (data: string): string => `event: message\ndata: ${data}\n\n`;

function sseHead(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'mcp-session-id': 'hostile' });
  res.flushHeaders();
}

async function handle(scenario: Scenario, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method === 'GET') {
    if (scenario !== 'get_404_body') return void res.writeHead(405).end();
    res.writeHead(404, { 'content-type': 'text/html' });
    // Slowly, so the client is still receiving when it discards the body.
    const page = '<p>not here</p>'.repeat(4096);
    let sent = 0;
    const timer = setInterval(() => {
      if (res.destroyed || sent >= MIB) {
        clearInterval(timer);
        if (!res.destroyed) res.end();
        return;
      }
      res.write(page);
      sent += page.length;
    }, 5);
    res.on('close', () => clearInterval(timer));
    return;
  }
  if (req.method === 'DELETE') return void res.writeHead(200).end();
  const raw = await readBody(req);
  let message: RpcMessage;
  try {
    message = JSON.parse(raw) as RpcMessage;
  } catch {
    return json(res, 400, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
  }
  if (message.id === undefined) {
    if (scenario !== 'notification_200_json') return void res.writeHead(202).end();
    // A body the client must discard, large enough to still be arriving when it does.
    res.writeHead(200, { 'content-type': 'application/json' });
    return stream(res, '{"jsonrpc":"2.0","result":{"padding":"', MIB, 'x', '"}}');
  }
  const id = message.id;
  // At connect time: the handshake or the discovery misbehaves, never the call.
  if (scenario === 'cut_initialize' && message.method === 'initialize') {
    const full = Buffer.from(rpc(id, resultOf(message)));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(full.length), 'mcp-session-id': 'hostile' });
    res.write(full.subarray(0, Math.floor(full.length / 2)));
    setTimeout(() => req.socket.destroy(), 100);
    return;
  }
  if (scenario === 'too_large_list' && message.method === 'tools/list') {
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'hostile' });
    return stream(
      res,
      `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":[{"name":"echo","description":"`,
      5 * MIB,
      'd',
      '","inputSchema":{"type":"object"}}]}}',
    );
  }
  if (message.method !== 'tools/call') return json(res, 200, rpc(id, resultOf(message)));

  const answer = rpc(id, resultOf(message));
  switch (scenario) {
    case 'data_after_json': {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(answer)),
        'mcp-session-id': 'hostile',
      });
      res.end(answer);
      // Past the end of the response, on the same (keep-alive) socket.
      res.once('finish', () => {
        if (!req.socket.destroyed)
          req.socket.write(
            `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[]}}\r\nHTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nextra`,
          );
      });
      return;
    }
    case 'data_after_sse': {
      sseHead(res);
      res.write(sseEvent(answer));
      res.write(sseEvent(rpc('not-a-request-of-yours', { content: [] })));
      res.write('event: message\ndata: {this is not json\n\n');
      res.write(`: ${'z'.repeat(256 * 1024)}\n\n`);
      setTimeout(() => res.end(), 200);
      return;
    }
    case 'cut_json': {
      const full = Buffer.from(answer);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(full.length), 'mcp-session-id': 'hostile' });
      res.write(full.subarray(0, Math.floor(full.length / 2)));
      setTimeout(() => req.socket.destroy(), 100);
      return;
    }
    case 'cut_sse': {
      sseHead(res);
      const event = sseEvent(answer);
      res.write(event.slice(0, Math.floor(event.length / 2)));
      setTimeout(() => req.socket.destroy(), 100);
      return;
    }
    case 'too_large_json': {
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'hostile' });
      return stream(res, `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`, 5 * MIB, 'y', '"}]}}');
    }
    case 'too_large_sse': {
      sseHead(res);
      // One event, many short lines: no single line is near the cap, the event is over it.
      const line = `data: ${' '.repeat(1024)}\n`;
      return stream(
        res,
        `event: message\ndata: {"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[]}}\n`,
        5 * MIB,
        line,
        '\n',
      );
    }
    case 'slow_body': {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(100 * MIB), 'mcp-session-id': 'hostile' });
      res.write('{"jsonrpc":"2.0","id":');
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        res.write(' ');
      }, 100);
      res.on('close', () => clearInterval(timer));
      return;
    }
    case 'invalid_json':
      return json(res, 200, '{"jsonrpc":"2.0","id": this is not JSON');
    case 'sse_no_response': {
      sseHead(res);
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        res.write(': still thinking\n\n');
      }, 100);
      res.on('close', () => clearInterval(timer));
      return;
    }
    case 'flood_sse': {
      sseHead(res);
      // Every event is a well-formed notification far under the per-message cap; together they
      // are far past any call's output ceiling.
      const event = sseEvent(
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'notifications/message',
          params: { level: 'info', logger: 'flood', data: 'f'.repeat(1024) },
        }),
      );
      return stream(res, '', 200 * MIB, event, '');
    }
    case 'redirect':
      res.writeHead(307, { location: elsewhereUrl, 'content-type': 'text/plain' });
      return stream(res, '', 256 * 1024, 'moved ', '');
    case 'huge_header':
      res.writeHead(200, { 'content-type': 'application/json', 'x-filler': 'h'.repeat(64 * 1024), 'mcp-session-id': 'hostile' });
      return void res.end(answer);
    default:
      return json(res, 200, answer);
  }
}

function route(req: IncomingMessage, res: ServerResponse): void {
  const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
  if (path === '/__elsewhere') {
    json(res, 200, JSON.stringify({ hits: elsewhereHits }));
    return;
  }
  const match = /^\/s\/([a-z0-9_]+)\/mcp$/.exec(path);
  const scenario = match?.[1] as Scenario | undefined;
  if (scenario === undefined || !(SCENARIOS as readonly string[]).includes(scenario)) {
    json(res, 404, JSON.stringify({ error: 'no such scenario' }));
    return;
  }
  handle(scenario, req, res).catch(() => res.destroy());
}

function listen(server: Server, host: string): Promise<number> {
  return new Promise((resolve) => server.listen(0, host, () => resolve((server.address() as AddressInfo).port)));
}

const main = createServer(route);
// Whatever reaches the other host is counted; it answers nothing useful.
const elsewhere = createServer((_req, res) => {
  elsewhereHits += 1;
  res.writeHead(500).end();
});
const [port, elsewherePort] = await Promise.all([listen(main, '127.0.0.1'), listen(elsewhere, '127.0.0.2')]);
elsewhereUrl = `http://127.0.0.2:${elsewherePort}/mcp`;
process.stdout.write(`${JSON.stringify({ ready: true, port, elsewhere: elsewhereUrl, pid: process.pid })}\n`);

exitWithHarness(() => {
  main.closeAllConnections();
  elsewhere.closeAllConnections();
});
