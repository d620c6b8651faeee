/**
 * A 2026-07-28 MCP server on the SDK's 2.x server (`createMcpHandler`, which also serves 2025
 * clients statelessly), started by the tests as a real child process
 * (`node --import tsx modern-http-server.ts`). It stands in for a third-party server of the new
 * revision: the adapter must speak 2026-07-28 to it (docs/adr/0044, "The client adapter moved").
 *
 *   POST /mcp        the MCP endpoint: tools `echo` (text) and `revision` (the revision the
 *                    request arrived in, as the SDK classified it)
 *   GET  /__seen     every /mcp request: its JSON-RPC method and its MCP-Protocol-Version header
 *
 * On start it prints one JSON line on stdout: {"ready":true,"port":N,"pid":P}.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';
import { exitWithHarness } from './harness-lifetime';

interface Seen {
  readonly rpcMethod: string | null;
  readonly protocolHeader: string | null;
}

const seen: Seen[] = [];

function mcpServer(): Server {
  const server = new Server({ name: 'modern', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', () => ({
    tools: [
      {
        name: 'echo',
        description: 'Echo the message.',
        inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
      },
    ],
  }));
  server.setRequestHandler('tools/call', (request) => {
    const message = typeof request.params.arguments?.message === 'string' ? request.params.arguments.message : '';
    return { content: [{ type: 'text', text: `Echo: ${message}` }] };
  });
  return server;
}

const handler = createMcpHandler(() => mcpServer());

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (req.method === 'GET' && url.pathname === '/__seen') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(seen));
    return;
  }
  if (url.pathname !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  const raw = req.method === 'POST' ? await body(req) : null;
  let rpcMethod: string | null = null;
  try {
    const parsed = raw === null ? null : (JSON.parse(raw.toString('utf8')) as { method?: unknown });
    rpcMethod = typeof parsed?.method === 'string' ? parsed.method : null;
  } catch {
    rpcMethod = null;
  }
  const protocolHeader = req.headers['mcp-protocol-version'];
  seen.push({ rpcMethod, protocolHeader: typeof protocolHeader === 'string' ? protocolHeader : null });
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) headers.set(name, value.join(', '));
  }
  const request = new Request(url, { method: req.method ?? 'GET', headers, ...(raw === null ? {} : { body: raw }) });
  const response = await handler.fetch(request);
  res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
  if (response.body === null) {
    res.end();
    return;
  }
  for await (const chunk of response.body) res.write(chunk);
  res.end();
}

const http = createServer((req, res) => {
  serve(req, res).catch(() => {
    if (!res.headersSent) res.writeHead(500);
    res.end();
  });
});
http.listen(0, '127.0.0.1', () => {
  const address = http.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ ready: true, port, pid: process.pid })}\n`);
});
exitWithHarness(() => http.close());
