import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeSystem, prepareOperatorConfig, StartupError, type ComposedSystem } from '@veetbot/composition';
import type { Principal } from '@veetbot/domain';
import { openMigratedMemoryDatabase, type Database } from '@veetbot/store-postgres';
import { TEMPLATE_CACHE } from '../src/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptableHttpServer, stopAllServers } from '../src/mcp-servers';

/**
 * Issue 10 item 3 (second part): the operator sets the egress policy of the operator's own
 * servers in the operator configuration, with the switches `veetbot mcp check` has. A local
 * development server (plain http on 127.0.0.1) is accepted with them and refused without them;
 * relaxing the operator's servers never relaxes a tenant's, even a tenant row with the very same
 * URL (ADR 0022).
 */
let dir: string;
let server: ScriptableHttpServer;
let database: Database;
let system: ComposedSystem | null = null;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'veetbot-operator-egress-'));
  server = await ScriptableHttpServer.start();
  database = await openMigratedMemoryDatabase(TEMPLATE_CACHE);
}, 120_000);

afterAll(async () => {
  await system?.close({ drainMs: 0 });
  await database?.close();
  await stopAllServers();
  await rm(dir, { recursive: true, force: true });
});

const localServer = (url: string) => ({
  server_id: 'devserver',
  transport: 'http',
  endpoint: url,
  auth_scheme: 'none',
  side_effect: 'none',
  risk: 'low',
  idempotency: 'read_only',
});

async function file(name: string, document: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(document));
  return path;
}

function refusal(path: string): string {
  try {
    prepareOperatorConfig(path);
  } catch (error) {
    return error instanceof StartupError ? `${error.code}: ${error.message}` : String(error);
  }
  return 'accepted';
}

describe('the operator configuration’s egress switches', () => {
  it('refuses a local plain-http server without them, naming the switch that is missing', async () => {
    expect(refusal(await file('strict.json', { mcp: { servers: [localServer(server.url)] } }))).toMatch(
      /^startup\.config_invalid: .*strict\.json at mcp\.servers\[0\]\.endpoint: mcp\.config\.endpoint_refused/,
    );
    // http alone is not enough for a loopback address, nor private addresses alone for http.
    expect(refusal(await file('http-only.json', { mcp: { egress: { allow_http: true }, servers: [localServer(server.url)] } }))).toMatch(
      /endpoint_refused/,
    );
    expect(
      refusal(await file('private-only.json', { mcp: { egress: { allow_private_addresses: true }, servers: [localServer(server.url)] } })),
    ).toMatch(/endpoint_refused/);
    // A host allowlist that does not name the host refuses it too.
    expect(
      refusal(
        await file('hosts.json', {
          mcp: {
            egress: { allow_http: true, allow_private_addresses: true, allow_hosts: ['mcp.example.com'] },
            servers: [localServer(server.url)],
          },
        }),
      ),
    ).toMatch(/endpoint_refused/);
  });

  it('refuses a malformed egress section by field', async () => {
    expect(refusal(await file('typo.json', { mcp: { egress: { allow_htp: true } } }))).toMatch(
      /mcp\.egress\.allow_htp: mcp\.config\.field_unknown/,
    );
    expect(refusal(await file('string.json', { mcp: { egress: { allow_http: 'yes' } } }))).toMatch(
      /mcp\.egress\.allow_http: mcp\.config\.egress_invalid/,
    );
    expect(refusal(await file('hosts-bad.json', { mcp: { tenant_egress: { allow_hosts: 'x' } } }))).toMatch(
      /mcp\.tenant_egress\.allow_hosts: mcp\.config\.egress_invalid/,
    );
  });

  it('accepts it with them, dials it, and keeps tenant servers strict — even a tenant row with the same URL', async () => {
    const path = await file('local.json', {
      mcp: { egress: { allow_http: true, allow_private_addresses: true, allow_hosts: ['127.0.0.1'] }, servers: [localServer(server.url)] },
    });
    const { config } = prepareOperatorConfig(path);
    expect(config.servers.map((s) => [s.serverId, s.endpoint])).toEqual([['devserver', server.url]]);
    expect(config.tenantEgress).toEqual({ allowHosts: [], allowHttp: false, allowPrivateAddresses: false });

    system = await composeSystem({ database, dataDir: dir, operator: config });
    const tenantId = 'egress-tenant';
    await system.stores.tenants.create({ id: tenantId, name: tenantId, createdAt: new Date() });
    // Written straight into the store (the api would refuse it at write): the dial must refuse it.
    await system.stores.mcpServers.create(tenantId, {
      serverId: 'copycat',
      transport: 'http',
      endpoint: server.url,
      authScheme: 'none',
      authName: null,
      credentialRef: null,
      tokenEndpoint: null,
      tokenScopes: null,
      sideEffect: 'none',
      risk: 'low',
      idempotency: 'read_only',
      requiredScopes: [],
      timeoutSeconds: 30,
      maximumOutputBytes: 1024 * 1024,
      createdAt: new Date(),
    });
    const principal: Principal = { tenant_id: tenantId, principal_id: 'p', scopes: ['mcp.*'] };
    const opened = await system.runtime.openSessionWithReport(
      tenantId,
      principal,
      { agentId: 'a' },
      { flags: {}, targetKinds: ['in_process', 'mcp'] },
    );
    const byServer = Object.fromEntries((opened.mcp?.servers ?? []).map((s) => [s.serverId, [s.status, s.reasonCode]]));
    expect(byServer.devserver).toEqual(['connected', null]);
    expect(byServer.copycat, JSON.stringify(byServer)).toEqual(['failed', 'tool.server_unreachable']);
    expect(opened.session.toolNames).toContain('mcp.devserver.read_item');
    expect(opened.session.toolNames.filter((n) => n.startsWith('mcp.copycat.'))).toEqual([]);
    // One handshake reached the server: the operator's. The tenant's copy was never dialled.
    expect((await server.counts()).initialize).toBe(1);
  }, 120_000);
});
