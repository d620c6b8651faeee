import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Session } from '@veetbot/client';
import { provisionTenantKey } from '@veetbot/composition';
import { openMigratedMemoryDatabase, type Database } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type ApiApp } from '../src/app';
import { composeSystem, type ComposedSystem } from '../src/compose';

/**
 * docs/adr/0056, what the tenant sees: a session that names a server whose dial the strict
 * tenant egress refused (its name resolves to loopback) or whose name does not resolve answers
 * `failed` / `tool.server_unreachable` with a `detail` that says egress or DNS — by code and
 * address class, never the address. The rows are written around the API, which refuses the
 * literal name `localhost` when it is written; any other name can resolve to loopback at dial.
 */
let database: Database;
let dataDir: string;
let system: ComposedSystem;
let api: ApiApp;
let key: string;

const row = (serverId: string, endpoint: string) => ({
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
  maximumOutputBytes: 65_536,
  createdAt: new Date(),
});

beforeAll(async () => {
  database = await openMigratedMemoryDatabase(join(tmpdir(), 'veetbot-pglite-templates'));
  dataDir = await mkdtemp(join(tmpdir(), 'veetbot-api-unreachable-'));
  // No egress override: the tenant egress is the strict default an operator file leaves alone.
  system = await composeSystem({ database, dataDir, workerSettings: { pollIntervalMs: 100, sweepIntervalMs: 60_000 } });
  ({ key } = await provisionTenantKey(system.stores, {
    tenantId: 'tenant-u',
    tenantName: 'tenant-u',
    principalId: 'admin',
    scopes: ['mcp.*'],
    now: new Date(),
  }));
  await system.stores.mcpServers.create('tenant-u', row('loopy', 'https://localhost:9/mcp'));
  await system.stores.mcpServers.create('tenant-u', row('nowhere', 'https://mcp.veetbot-test.invalid/mcp'));
  api = buildApp(system.deps);
}, 120_000);

afterAll(async () => {
  await system?.close({ drainMs: 0 });
  await database?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('POST /v1/sessions naming tenant servers that cannot be dialled', () => {
  it('reports tool.server_unreachable with an egress or DNS detail, and no address', async () => {
    const response = await api.app.request('http://api.test/v1/sessions', {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_id: 'a', mcp_servers: ['loopy', 'nowhere'] }),
    });
    expect(response.status).toBe(201);
    const text = await response.text();
    const session = JSON.parse(text) as Session;
    expect(session.mcp_servers).toEqual([
      {
        server_id: 'loopy',
        transport: 'http',
        status: 'failed',
        reason_code: 'tool.server_unreachable',
        detail: 'Egress: the egress policy refused the connection (egress.address_refused: The destination address is refused (loopback).)',
        tool_count: 0,
      },
      {
        server_id: 'nowhere',
        transport: 'http',
        status: 'failed',
        reason_code: 'tool.server_unreachable',
        detail: "DNS: the server's host name did not resolve (egress.resolve_failed).",
        tool_count: 0,
      },
    ]);
    expect(text).not.toContain('127.0.0.1');
  });
});
