import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAdaptorServer } from '@hono/node-server';
import type { StepOutcome } from '@veetbot/client';
import { DefaultEgressPolicy } from '@veetbot/mcp-adapter';
import { openMigratedMemoryDatabase, type Database } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app';
import { composeSystem, type ComposedSystem } from '../src/compose';
import { operationsListener, provisionTenantKey } from '@veetbot/composition';
import { ALL_SCOPES } from './harness';

/*
 * docs/adr/0055: /metrics (the api's, and a worker's operations port over the same composition)
 * never names a tenant's server, its tools or the tenant; with VEETBOT_METRICS_TOKEN set it
 * answers only the operator's bearer token. Real HTTP on 127.0.0.1, a real MCP server the tenant
 * registers, the in-process worker running the call.
 */

const TENANT = 'tenant-zeta-7781';
const SERVER_ID = 'zq_private_board';
const REMOTE_TOOL = 'publish_merger_memo';
const TOKEN = 'operator-metrics-token-0123456789';

let database: Database;
let dataDir: string;
let system: ComposedSystem;
let api: Server;
let worker: Server;
let mcp: Server;
let apiBase: string;
let workerBase: string;
let mcpUrl: string;
let key: string;

/** A minimal MCP server over Streamable HTTP (JSON answers) with one tool. */
function mcpServer(): Server {
  return createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const message = JSON.parse(body) as { id?: number; method: string; params?: { protocolVersion?: string } };
      if (message.id === undefined) return void res.writeHead(202).end();
      const answer = (result: unknown) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      };
      if (message.method === 'initialize')
        answer({
          protocolVersion: message.params?.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'board', version: '1.0.0' },
        });
      else if (message.method === 'tools/list')
        answer({ tools: [{ name: REMOTE_TOOL, description: 'Publishes.', inputSchema: { type: 'object', properties: {} } }] });
      else if (message.method === 'tools/call') answer({ content: [{ type: 'text', text: 'published' }] });
      else answer({});
    });
  });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function call(method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return fetch(`${apiBase}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

beforeAll(async () => {
  database = await openMigratedMemoryDatabase(join(tmpdir(), 'veetbot-pglite-templates'));
  dataDir = await mkdtemp(join(tmpdir(), 'veetbot-metrics-'));
  system = await composeSystem({
    database,
    dataDir,
    sandbox: false,
    // RULINGS.md "Egress": the tests' allowance, plain http to 127.0.0.1.
    egress: new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true }),
    workerSettings: { pollIntervalMs: 50, sweepIntervalMs: 60_000 },
    apiSettings: { stepPollMs: 50 },
    metricsToken: TOKEN,
  });
  system.worker.start();
  api = createAdaptorServer({ fetch: buildApp(system.deps).app.fetch }) as Server;
  apiBase = await listen(api);
  worker = createServer(operationsListener(() => system, system.metricsToken));
  workerBase = await listen(worker);
  mcp = mcpServer();
  mcpUrl = `${await listen(mcp)}/mcp`;
  key = (
    await provisionTenantKey(system.stores, {
      tenantId: TENANT,
      tenantName: TENANT,
      principalId: 'admin',
      scopes: ALL_SCOPES,
      now: new Date(),
    })
  ).key;
}, 120_000);

afterAll(async () => {
  for (const server of [api, worker, mcp]) {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  }
  await system?.close({ drainMs: 5_000 });
  await database?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('/metrics and tenant names (docs/adr/0055)', () => {
  it("counts a tenant server's call under tenant_server: neither the server's id, its tool's name nor the tenant appears, on the api's or the worker's /metrics", async () => {
    const registered = await call('POST', '/v1/mcp/servers', {
      server_id: SERVER_ID,
      transport: 'http',
      endpoint: mcpUrl,
      auth_scheme: 'none',
      side_effect: 'external_read',
      risk: 'low',
      idempotency: 'read_only',
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
    const session = await call('POST', '/v1/sessions', { agent_id: 'agent-1', mcp_servers: [SERVER_ID] });
    expect(session.status).toBe(201);
    const sessionId = ((await session.json()) as { id: string }).id;
    const run = await call('POST', '/v1/runs', { session_id: sessionId, deadline_seconds: 600 });
    const runId = ((await run.json()) as { id: string }).id;
    const step = await call('POST', `/v1/runs/${runId}/steps`, {
      step_number: 1,
      calls: [{ call_id: 'c1', tool_name: `mcp.${SERVER_ID}.${REMOTE_TOOL}`, arguments: {}, context_trust: ['user'] }],
      wait_seconds: 30,
    });
    expect(step.status).toBe(200);
    expect(((await step.json()) as StepOutcome).items[0]?.outcome.status).toBe('succeeded');

    for (const base of [apiBase, workerBase]) {
      const response = await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text).not.toContain(SERVER_ID);
      expect(text).not.toContain(REMOTE_TOOL);
      expect(text).not.toContain(TENANT);
      expect(text).not.toContain('zeta');
      // Still counted: the call, and the server's round trips, under the one tenant label.
      expect(text).toMatch(/^tool_calls_total\{name="tenant_server",source="mcp",outcome_status="succeeded"\} 1$/m);
      expect(text).toMatch(/^mcp_requests_total\{server="tenant_server",method="tools\/call",outcome="ok"\} 1$/m);
    }
  });

  it('with VEETBOT_METRICS_TOKEN set, /metrics answers 401 metrics.unauthorized without it or with another, on both ports', async () => {
    for (const base of [apiBase, workerBase]) {
      for (const headers of [{}, { Authorization: 'Bearer not-the-operator-token-xx' }, { Authorization: TOKEN }] as Record<
        string,
        string
      >[]) {
        const refused = await fetch(`${base}/metrics`, { headers });
        expect(refused.status, base).toBe(401);
        expect(refused.headers.get('www-authenticate')).toBe('Bearer');
        const body = (await refused.json()) as { error: { code: string } };
        expect(body.error.code).toBe('metrics.unauthorized');
      }
      // The probes stay open: a load balancer has no token.
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
    }
  });
});
