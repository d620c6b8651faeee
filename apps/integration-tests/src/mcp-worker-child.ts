/**
 * A long-lived process that makes governed MCP calls the way a worker does, for
 * mcp-bounded-output.test.ts, which samples this process's RSS (mcp-hostile-http-worker.test.ts
 * runs the product's own api and worker processes instead): the real pipeline (executeToolCall, all fourteen steps, rows
 * in a real database: PostgreSQL at DATABASE_URL, else PGlite) and the real McpAdapter, with
 * tenant HTTP servers on loopback (the egress allowance RULINGS.md "Egress" gives tests). No
 * 'uncaughtException' handler: a remote server that makes anything throw outside a promise
 * ends this process, exactly as it would end a worker.
 *
 *   node --import tsx mcp-worker-child.ts <hostile-server-port>
 *
 * Per scenario of servers/hostile-http-server.ts, two tenant servers: `r_{scenario}` (read-only)
 * and `w_{scenario}` (external_write, non_idempotent). Over HTTP on 127.0.0.1:
 *
 *   GET  /healthz   {"status":"ok","pid":P}
 *   POST /call      {"server":"r_cut_json","arguments":{...}} -> the call's outcome
 *
 * On start it prints one JSON line on stdout: {"ready":true,"port":N,"servers":[{server,status,reason_code}]}.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HOSTILE_SCENARIOS } from './hostile-scenarios';
import { httpServer, openMcpScene } from './mcp-harness';
import { openTestDatabase } from './test-database';

const hostilePort = Number(process.argv[2]);
if (!Number.isInteger(hostilePort) || hostilePort <= 0) throw new Error('usage: mcp-worker-child.ts <hostile-server-port>');

// Short timeouts: the slow and silent scenarios end by the call's own timeout.
const timing = { timeoutSeconds: 3, requestTimeoutSeconds: 3, connectTimeoutSeconds: 10 };
const servers = HOSTILE_SCENARIOS.flatMap((scenario) => {
  const url = `http://127.0.0.1:${hostilePort}/s/${scenario}/mcp`;
  return [
    httpServer(`r_${scenario}`, url, timing),
    httpServer(`w_${scenario}`, url, { ...timing, sideEffect: 'external_write', risk: 'medium', idempotency: 'non_idempotent' }),
  ];
});

const database = await openTestDatabase(process.env.DATABASE_URL ? 'postgres' : 'pglite');
const scene = await openMcpScene(database, { servers });

function send(res: ServerResponse, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}

async function call(req: IncomingMessage): Promise<unknown> {
  let raw = '';
  for await (const chunk of req) raw += (chunk as Buffer).toString('utf8');
  const body = JSON.parse(raw) as { server: string; arguments?: unknown };
  const { item, row } = await scene.run(`mcp.${body.server}.echo`, body.arguments ?? { text: 'hi' });
  return { status: item.outcome.status, reason_code: item.outcome.reason_code, row_status: row.status };
}

const http = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/healthz') return send(res, 200, { status: 'ok', pid: process.pid });
  if (req.method === 'POST' && req.url === '/call') {
    call(req).then(
      (outcome) => send(res, 200, outcome),
      (error: unknown) => send(res, 500, { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }),
    );
    return;
  }
  send(res, 404, { error: 'not found' });
});
http.listen(0, '127.0.0.1', () => {
  const port = (http.address() as AddressInfo).port;
  const prepared = scene.preparation.servers.map((s) => ({ server: s.serverId, status: s.status, reason_code: s.reasonCode }));
  process.stdout.write(`${JSON.stringify({ ready: true, port, pid: process.pid, servers: prepared })}\n`);
});

const stop = (): void => {
  http.close();
  void scene
    .close()
    .then(() => database.close())
    .finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
// The test holds our stdin open; when it closes, the test process is gone.
process.stdin.on('end', stop);
process.stdin.resume();
