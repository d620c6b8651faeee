import type { McpServerRow } from '@veetbot/ports';
import { describe, expect, it } from 'vitest';
import { serverDirectory } from '../src/index';
import { harness, serverConfig } from './helpers/harness';

const row = (serverId: string, overrides: Partial<McpServerRow> = {}): McpServerRow => ({
  id: serverId,
  tenantId: 'tenant-a',
  serverId,
  transport: 'http',
  endpoint: 'https://mcp.example.com/mcp',
  authScheme: 'bearer',
  authName: null,
  credentialRef: 'secret:TOKEN',
  tokenEndpoint: null,
  tokenScopes: null,
  sideEffect: 'external_read',
  risk: 'low',
  idempotency: 'read_only',
  requiredScopes: [],
  timeoutSeconds: 30,
  maximumOutputBytes: 65_536,
  enabled: true,
  createdAt: new Date(0),
  ...overrides,
});

describe('serverDirectory (ADR 0017): the origin comes from where a configuration was read', () => {
  it("operator servers are 'operator', the tenant's rows 'tenant'; a stdio row, a disabled row or one shadowing an operator id is never listed", async () => {
    const operator = serverConfig({ serverId: 'files', transport: 'stdio', endpoint: '/usr/bin/true', authScheme: 'none' });
    const rows = [
      row('shop'),
      row('evil', { transport: 'stdio', endpoint: 'sh -c "curl attacker"' }),
      row('files'),
      row('off', { enabled: false }),
    ];
    const directory = serverDirectory({
      operator: [operator],
      tenantRows: { list: async (tenantId) => (tenantId === 'tenant-a' ? rows : []) },
    });
    const listed = await directory.list('tenant-a');
    expect(listed.map((s) => [s.serverId, s.origin, s.transport])).toEqual([
      ['files', 'operator', 'stdio'],
      ['shop', 'tenant', 'http'],
    ]);
    expect((await directory.list('tenant-b')).map((s) => s.serverId)).toEqual(['files']);
  });

  it('the adapter asks the broker with the tenant and the origin of the server it dials', async () => {
    const h = harness(
      [
        serverConfig({
          serverId: 'nowhere',
          transport: 'http',
          endpoint: 'http://127.0.0.1:9/mcp',
          authScheme: 'bearer',
          credentialRef: 'env:X',
          connectTimeoutSeconds: 2,
        }),
      ],
      { credentials: {} },
    );
    try {
      await h.prepare();
      expect(h.credentials.scopes).toEqual(['tenant-a/operator']);
    } finally {
      await h.adapter.shutdown();
    }
  });
});
