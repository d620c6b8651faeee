import { VeetbotClient } from '@veetbot/client';
import { provisionTenantKey } from '@veetbot/composition';
import { createStores, openDatabase, type Database } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startScene, until, waitForOutput, type E2eScene } from '../src/e2e-processes';
import { ScriptableHttpServer, stopAllServers } from '../src/mcp-servers';

/**
 * Issue 16 items 2, 3 and 4 with the api (`--api-only`) and a worker as separate real processes
 * on PostgreSQL (docs/adr/0024). The operator's server is a scripted MCP server process that
 * counts the MCP sessions open on it (`open`: initialized, not yet terminated), so "the worker
 * let go" is the server's own observation, not the worker's word.
 *
 * - Warm-up (item 4): both processes warm the operator's servers at start and record nothing; a
 *   session of any tenant then pins the server without a handshake (mcp.server.pinned); a
 *   server that is down is tried for at most mcp.warmup_attempts rounds.
 * - Closure (item 3): a session closed through the api is let go by the worker at its next
 *   MCP sweep (mcp.sweep_interval_seconds: 0.5 here; the idle timeout is the default 900 s).
 * - Teardown (item 2): a run cancelled through the api — the worker between steps — is let go
 *   the same way; the session stays usable and its next run reconnects under the same pin.
 */
let scene: E2eScene;
let ops: ScriptableHttpServer;
let database: Database;
let deadPort: number;

const SCOPES = ['mcp.*'];

beforeAll(async () => {
  ops = await ScriptableHttpServer.start();
  deadPort = await freePort();
  scene = await startScene({
    workers: 1,
    operatorConfig: {
      mcp: {
        egress: { allow_http: true, allow_private_addresses: true },
        sweep_interval_seconds: 0.5,
        warmup_attempts: 2,
        warmup_retry_seconds: 0.2,
        warmup_connect_timeout_seconds: 5,
        servers: [
          {
            server_id: 'ops',
            transport: 'http',
            endpoint: ops.url,
            auth_scheme: 'none',
            side_effect: 'none',
            risk: 'low',
            idempotency: 'read_only',
          },
          {
            server_id: 'down',
            transport: 'http',
            endpoint: `http://127.0.0.1:${deadPort}/mcp`,
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

async function client(tenantId: string): Promise<VeetbotClient> {
  const { key } = await provisionTenantKey(createStores(database), {
    tenantId,
    tenantName: tenantId,
    principalId: `${tenantId}-agent`,
    scopes: SCOPES,
    now: new Date(),
  });
  return new VeetbotClient({ baseUrl: scene.baseUrl, apiKey: key });
}

const openOn = async () => (await ops.counts()).open;

/** The tenant's MCP events (tenant-level: run_id null) as `type server`. */
async function mcpEventTypes(tenantId: string): Promise<string[]> {
  const rows = await createStores(database).events.listAfter(tenantId, null, 0, 10_000);
  return rows.filter((r) => r.type.startsWith('mcp.')).map((r) => `${r.type} ${String(r.payload.server)}`);
}

async function readOps(c: VeetbotClient, runId: string, stepNumber: number): Promise<string> {
  const outcome = await c.submitStepAndWait(runId, {
    step_number: stepNumber,
    calls: [{ call_id: `c${stepNumber}`, tool_name: 'mcp.ops.read_item', arguments: { id: `i${stepNumber}` }, context_trust: ['user'] }],
  });
  return outcome.items.map((i) => `${i.outcome.status}/${i.outcome.reason_code}`).join(',');
}

describe('MCP session lifecycle across an api and a worker process (issue 16 items 2-4)', () => {
  it("warm-up in both processes records nothing; any tenant's session then pins the operator server without a handshake", async () => {
    await waitForOutput(scene.api, /MCP warm-up: ops remembered; down still unreachable after 2 round\(s\)/, 60_000);
    await waitForOutput(scene.workers[0]!, /MCP warm-up: ops remembered; down still unreachable after 2 round\(s\)/, 60_000);
    // The api and the worker each connected, discovered and closed: two handshakes, none held.
    expect(await ops.counts()).toMatchObject({ initialize: 2, open: 0 });
    // Nothing recorded: not under the demo tenant the api provisions (nor anywhere: no tenant is named).
    expect(await mcpEventTypes('demo')).toEqual([]);

    for (const tenant of ['warm-a', 'warm-b']) {
      const session = await (await client(tenant)).openSession({ agent_id: 'lifecycle' });
      expect(session.mcp_servers?.find((s) => s.server_id === 'ops')).toMatchObject({ status: 'pinned' });
      expect(session.tools.map((t) => t.name)).toContain('mcp.ops.read_item');
      // The session's own record: pinned in place of connected, and no handshake.
      expect(await mcpEventTypes(tenant)).toEqual(['mcp.server.pinned ops', 'mcp.server.disconnected down']);
    }
    expect((await ops.counts()).initialize).toBe(2);
  }, 120_000);

  it('a session closed through the api: the worker lets go of its transport at its next sweep', async () => {
    const c = await client('close-t');
    // Naming the server makes the api's discovery live: the api holds a transport too.
    const session = await c.openSession({ agent_id: 'lifecycle', mcp_servers: ['ops'] });
    const run = await c.createRun({ session_id: session.id, deadline_seconds: 600 });
    expect(await readOps(c, run.id, 1)).toBe('succeeded/tool.ok');
    // The api's transport and the worker's, which connected for the call (idle timeout: 900 s).
    expect(await openOn()).toBe(2);
    await c.closeSession(session.id);
    // The api let go of its own as it closed the session; the worker of its own at its next sweep.
    await until(openOn, (open) => open === 0, 30_000, "the worker closing the session's MCP transport");
  }, 120_000);

  it('a run cancelled through the api while the worker is between steps: the worker lets go; the next run reconnects under the pin', async () => {
    const c = await client('cancel-t');
    const session = await c.openSession({ agent_id: 'lifecycle', mcp_servers: ['ops'] });
    const first = await c.createRun({ session_id: session.id, deadline_seconds: 600 });
    expect(await readOps(c, first.id, 1)).toBe('succeeded/tool.ok');
    expect(await openOn()).toBe(2);
    const initialized = (await ops.counts()).initialize;
    await c.cancelRun(first.id);
    await until(openOn, (open) => open === 0, 30_000, "the worker releasing the cancelled run's MCP transport");
    // The session is still open: a new run's call reconnects (one handshake) and compares with the pin.
    const second = await c.createRun({ session_id: session.id, deadline_seconds: 600 });
    expect(await readOps(c, second.id, 1)).toBe('succeeded/tool.ok');
    expect((await ops.counts()).initialize).toBe(initialized + 1);
    expect(await openOn()).toBe(1);
  }, 120_000);
});
