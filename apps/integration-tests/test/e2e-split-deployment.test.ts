import { VeetbotClient, type StepOutcome } from '@veetbot/client';
import { provisionTenantKey } from '@veetbot/composition';
import { createStores, openDatabase, type Database } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScene, workerOperationsUrl, type E2eScene } from '../src/e2e-processes';
import { ScriptableHttpServer, stopAllServers } from '../src/mcp-servers';

/**
 * Issue 10 item 8: the split deployment as the README starts it — `pnpm start:api` and
 * `pnpm start:worker` (their scripts' commands: `apps/api/src/main.ts --api-only` and
 * `apps/worker/src/main.ts`) as two real processes on PostgreSQL, given only DATABASE_URL,
 * VEETBOT_DATA_DIR and their ports. The operator file sits at its default place and relaxes the
 * tenant egress policy for the scripted servers on 127.0.0.1 (plain http); a worker that did not
 * read it would refuse every dial; the operator's own server (relaxed by `mcp.egress`) is
 * reached from the worker too. Two tenants each register a server with the SAME server_id,
 * pointing at two different scripted servers: each call reaches its own tenant's server (ADR
 * 0011's per-tenant registries in the worker), and the worker's own /metrics counts them.
 */
let scene: E2eScene;
let serverA: ScriptableHttpServer;
let serverB: ScriptableHttpServer;
/** The operator's own server (operator.json), relaxed by `mcp.egress`. */
let operatorServer: ScriptableHttpServer;
let database: Database;

/** The scopes an operator would give these test keys (the mcp-servers route's write scope included). */
const SCOPES = ['mcp.*', 'mcp.servers.write', 'secrets.write', 'approvals.decide'];

beforeAll(async () => {
  serverA = await ScriptableHttpServer.start();
  serverB = await ScriptableHttpServer.start();
  operatorServer = await ScriptableHttpServer.start();
  scene = await startScene({
    workers: 1,
    operatorConfig: {
      mcp: {
        egress: { allow_http: true, allow_private_addresses: true },
        tenant_egress: { allow_http: true, allow_private_addresses: true },
        servers: [
          {
            server_id: 'ops',
            transport: 'http',
            endpoint: operatorServer.url,
            auth_scheme: 'none',
            side_effect: 'none',
            risk: 'low',
            idempotency: 'read_only',
          },
        ],
      },
    },
  });
  database = await openDatabase({ url: scene.url });
}, 180_000);

afterAll(async () => {
  await database?.close();
  await scene?.close();
  await stopAllServers();
});

async function tenantClient(tenantId: string, server: ScriptableHttpServer): Promise<VeetbotClient> {
  const { key } = await provisionTenantKey(createStores(database), {
    tenantId,
    tenantName: tenantId,
    principalId: `${tenantId}-agent`,
    scopes: SCOPES,
    now: new Date(),
  });
  const client = new VeetbotClient({ baseUrl: scene.baseUrl, apiKey: key });
  const response = await fetch(`${scene.baseUrl}/v1/mcp/servers`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      server_id: 'tickets',
      transport: 'http',
      endpoint: server.url,
      auth_scheme: 'none',
      side_effect: 'none',
      risk: 'low',
      idempotency: 'read_only',
    }),
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return client;
}

async function readItem(client: VeetbotClient, id: string, tool = 'mcp.tickets.read_item'): Promise<StepOutcome> {
  const session = await client.openSession({ agent_id: 'split-agent' });
  expect(session.tools.map((t) => t.name)).toContain(tool);
  const run = await client.createRun({ session_id: session.id, deadline_seconds: 600 });
  return client.submitStepAndWait(run.id, {
    step_number: 1,
    calls: [{ call_id: 'c1', tool_name: tool, arguments: { id }, context_trust: ['user'] }],
  });
}

describe('api and worker as separate processes (issue 10 item 8)', () => {
  it('each tenant reaches its own server under the same server_id, and the worker serves /metrics, /healthz and /readyz', async () => {
    const a = await tenantClient('split-a', serverA);
    const b = await tenantClient('split-b', serverB);

    const first = await readItem(a, 'a-1');
    expect(
      first.items.map((i) => i.outcome.status),
      JSON.stringify(first),
    ).toEqual(['succeeded']);
    expect((await serverA.counts()).calls.read_item).toBe(1);
    expect((await serverB.counts()).calls.read_item ?? 0).toBe(0);

    const second = await readItem(b, 'b-1');
    expect(
      second.items.map((i) => i.outcome.status),
      JSON.stringify(second),
    ).toEqual(['succeeded']);
    expect((await serverA.counts()).calls.read_item).toBe(1);
    expect((await serverB.counts()).calls.read_item).toBe(1);

    // The operator's server, from the operator file both processes read at its default place:
    // once `tool.withdrawn` in the worker, which never loaded it.
    const operatorCall = await readItem(a, 'o-1', 'mcp.ops.read_item');
    expect(
      operatorCall.items.map((i) => [i.outcome.status, i.outcome.reason_code]),
      JSON.stringify(operatorCall),
    ).toEqual([['succeeded', 'tool.ok']]);
    expect((await operatorServer.counts()).calls.read_item).toBe(1);

    // The calls ran in the worker process: its own port shows them.
    const operations = workerOperationsUrl(scene.workers[0]!);
    const metrics = await (await fetch(`${operations}/metrics`)).text();
    // docs/adr/0055: the tenants' server (their own id, `tickets`) is `tenant_server`; the
    // operator's keeps its name.
    expect(metrics).toMatch(/^tool_calls_total\{name="tenant_server",source="mcp",outcome_status="succeeded"\} 2$/m);
    expect(metrics).toMatch(/^mcp_requests_total\{server="tenant_server",method="tools\/call",outcome="ok"\} 2$/m);
    expect(metrics).toMatch(/^tool_calls_total\{name="mcp\.ops\.read_item",source="mcp",outcome_status="succeeded"\} 1$/m);
    expect(metrics).not.toContain('tickets');
    expect(metrics).toContain('# TYPE tool_uncertain_total counter');
    expect(await (await fetch(`${operations}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${operations}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', database: { reachable: true } });
  }, 180_000);
});
