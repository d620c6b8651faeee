import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeSystem, type ComposedSystem } from '@veetbot/composition';
import { REASON_CODES, type Principal } from '@veetbot/domain';
import { openMigratedMemoryDatabase, type Database } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptableHttpServer, stopAllServers } from '../src/mcp-servers';
import { TEMPLATE_CACHE } from '../src/test-database';

/**
 * Issue 30 item 3 (docs/adr/0056): a tenant MCP server refused by egress at dial — its host name
 * resolves to a loopback address — or whose name does not resolve at all is still reported
 * `tool.server_unreachable` with that code's one fixed message, and its detail now says which:
 * egress or DNS, by the egress code and the address class, never the resolved address.
 * Composed as `pnpm start` composes it, with the strict tenant egress of an operator file that
 * does not relax it. The resolver is the system's: `localhost` resolves to 127.0.0.1, and a name
 * under `.invalid` never resolves (RFC 6761).
 */
let dir: string;
let database: Database;
let decoy: ScriptableHttpServer;
let system: ComposedSystem | null = null;
const tenantId = 'detail-tenant';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'veetbot-unreachable-detail-'));
  database = await openMigratedMemoryDatabase(TEMPLATE_CACHE);
  // A real MCP server on loopback: the refused dial must never reach it.
  decoy = await ScriptableHttpServer.start();
}, 120_000);

afterAll(async () => {
  await system?.close({ drainMs: 0 });
  await database?.close();
  await stopAllServers();
  await rm(dir, { recursive: true, force: true });
});

function tenantServer(serverId: string, endpoint: string) {
  return {
    serverId,
    transport: 'http' as const,
    endpoint,
    authScheme: 'none' as const,
    authName: null,
    credentialRef: null,
    tokenEndpoint: null,
    tokenScopes: null,
    sideEffect: 'none' as const,
    risk: 'low' as const,
    idempotency: 'read_only' as const,
    requiredScopes: [],
    timeoutSeconds: 30,
    maximumOutputBytes: 1024 * 1024,
    createdAt: new Date(),
  };
}

describe('a tenant MCP server that cannot be dialled (strict tenant egress)', () => {
  it('is tool.server_unreachable with its fixed message, and its detail names egress (loopback) or DNS', async () => {
    system = await composeSystem({ database, dataDir: dir });
    await system.stores.tenants.create({ id: tenantId, name: tenantId, createdAt: new Date() });
    // Written straight into the store: the api refuses the literal name `localhost` when it is
    // written, but any other name can resolve to loopback at dial (a DNS answer the tenant
    // controls); `localhost` is the one such name every machine has.
    const loopbackPort = new URL(decoy.url).port;
    await system.stores.mcpServers.create(tenantId, tenantServer('loopy', `https://localhost:${loopbackPort}/mcp`));
    await system.stores.mcpServers.create(tenantId, tenantServer('nowhere', 'https://mcp.veetbot-test.invalid/mcp'));

    const principal: Principal = { tenant_id: tenantId, principal_id: 'p', scopes: ['mcp.*'] };
    const opened = await system.runtime.openSessionWithReport(
      tenantId,
      principal,
      { agentId: 'a' },
      { flags: {}, targetKinds: ['in_process', 'mcp'] },
    );
    const byServer = Object.fromEntries((opened.mcp?.servers ?? []).map((s) => [s.serverId, s]));

    const loopy = byServer.loopy;
    expect(loopy?.status).toBe('failed');
    expect(loopy?.reasonCode).toBe('tool.server_unreachable');
    expect(loopy?.detail).toBe(
      'Egress: the egress policy refused the connection (egress.address_refused: The destination address is refused (loopback).)',
    );

    const nowhere = byServer.nowhere;
    expect(nowhere?.status).toBe('failed');
    expect(nowhere?.reasonCode).toBe('tool.server_unreachable');
    expect(nowhere?.detail).toBe("DNS: the server's host name did not resolve (egress.resolve_failed).");

    // What the tenant may not learn: the address its name resolved to.
    expect(JSON.stringify(opened.mcp?.servers)).not.toContain('127.0.0.1');
    // The code keeps its one fixed message (what a model or an agent is shown).
    expect(REASON_CODES['tool.server_unreachable'].message).toBe('This capability is not reachable right now.');
    // Neither server's tools were pinned, and the loopback server never saw a request.
    expect(opened.session.toolNames.filter((n) => n.startsWith('mcp.'))).toEqual([]);
    expect((await decoy.counts()).initialize ?? 0).toBe(0);

    // The events keep the code only (§ events: no error detail in the event stream). The
    // session's events belong to no run.
    const events = await system.stores.events.listAfter(tenantId, null, 0, 100);
    const disconnected = events.filter((e) => e.type === 'mcp.server.disconnected');
    expect(disconnected.map((e) => e.payload.reason_code)).toEqual(['tool.server_unreachable', 'tool.server_unreachable']);
    expect(JSON.stringify(disconnected)).not.toMatch(/egress|DNS/);
  }, 120_000);
});
