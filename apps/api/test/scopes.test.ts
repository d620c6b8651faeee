import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionTenantKey } from '@veetbot/composition';
import { errorOf, openApiHarness, type ApiHarness } from './harness';

/*
 * ADR 0017: every tenant route that changes configuration needs its scope, checked like
 * approvals.decide; a key without it gets 403 auth.scope_missing and nothing changes.
 */
let h: ApiHarness;
let wildcard: string;
let readOnly: string;
beforeAll(async () => {
  h = await openApiHarness({ worker: false });
  const now = new Date();
  // An agent's key that may call every MCP tool: the wildcard does not grant configuration.
  wildcard = (
    await provisionTenantKey(h.system.stores, {
      tenantId: h.a.tenantId,
      tenantName: h.a.tenantId,
      principalId: 'agent',
      scopes: ['mcp.*', 'secrets.*'],
      now,
    })
  ).key;
  readOnly = (
    await provisionTenantKey(h.system.stores, {
      tenantId: h.a.tenantId,
      tenantName: h.a.tenantId,
      principalId: 'auditor',
      scopes: ['secrets.read'],
      now,
    })
  ).key;
  expect((await h.call('PUT', '/v1/secrets/TOKEN', { body: { value: 'v' } })).status).toBe(201);
  const created = await h.call('POST', '/v1/mcp/servers', {
    body: {
      server_id: 'docs',
      transport: 'http',
      endpoint: 'https://docs.example/mcp',
      auth_scheme: 'bearer',
      credential_ref: 'secret:TOKEN',
    },
  });
  expect(created.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await h.close();
});

const routes: [string, string, string, unknown][] = [
  [
    'POST',
    '/v1/mcp/servers',
    'mcp.servers.write',
    { server_id: 'other', transport: 'http', endpoint: 'https://other.example/mcp', auth_scheme: 'none' },
  ],
  ['PATCH', '/v1/mcp/servers/docs', 'mcp.servers.write', { endpoint: 'https://attacker.example/mcp' }],
  ['POST', '/v1/mcp/servers/docs/disable', 'mcp.servers.write', undefined],
  ['PUT', '/v1/secrets/TOKEN', 'secrets.write', { value: 'replaced' }],
  ['DELETE', '/v1/secrets/TOKEN', 'secrets.write', undefined],
  ['GET', '/v1/secrets', 'secrets.read', undefined],
];

describe('configuration scopes', () => {
  it.each(routes)(
    '%s %s needs %s: 403 auth.scope_missing without it, for a plain key and a wildcard key',
    async (method, path, scope, body) => {
      for (const key of [h.a.plainKey, wildcard]) {
        const refused = await errorOf(await h.call(method, path, { key, ...(body === undefined ? {} : { body }) }));
        expect(refused).toMatchObject({ status: 403, code: 'auth.scope_missing' });
        expect(refused.message).toContain(scope);
      }
    },
  );

  it('secrets.read lists but cannot write; nothing the refused calls asked for happened', async () => {
    expect((await h.call('GET', '/v1/secrets', { key: readOnly })).status).toBe(200);
    expect((await errorOf(await h.call('PUT', '/v1/secrets/TOKEN', { key: readOnly, body: { value: 'x' } }))).status).toBe(403);
    const secrets = (await (await h.call('GET', '/v1/secrets')).json()) as { secrets: { name: string; rotated_at: string | null }[] };
    expect(secrets.secrets).toEqual([expect.objectContaining({ name: 'TOKEN', rotated_at: null })]);
    const servers = (await (await h.call('GET', '/v1/mcp/servers')).json()) as {
      servers: { server_id: string; endpoint: string; enabled: boolean }[];
    };
    expect(servers.servers).toEqual([expect.objectContaining({ server_id: 'docs', endpoint: 'https://docs.example/mcp', enabled: true })]);
  });

  it('with the scopes: PUT 201 then 200, DELETE 204 then 404; a name outside the grammar or a bad value is 400, never echoed', async () => {
    expect((await h.call('PUT', '/v1/secrets/Extra.key-1', { body: { value: 'one' } })).status).toBe(201);
    expect((await h.call('PUT', '/v1/secrets/Extra.key-1', { body: { value: 'two' } })).status).toBe(200);
    expect((await h.call('DELETE', '/v1/secrets/Extra.key-1')).status).toBe(204);
    expect((await errorOf(await h.call('DELETE', '/v1/secrets/Extra.key-1'))).status).toBe(404);
    expect((await errorOf(await h.call('DELETE', '/v1/secrets/1bad'))).status).toBe(404);
    for (const name of ['1bad', 'a%20b', 'x'.repeat(65), 'a%2Fb']) {
      expect(await errorOf(await h.call('PUT', `/v1/secrets/${name}`, { body: { value: 'v' } })), name).toMatchObject({
        status: 400,
        code: 'request.invalid',
      });
    }
    const hostile = ['', 'nul\u0000inside', 'lone\ud800surrogate', 'x'.repeat(16 * 1024 + 1), 'é'.repeat(8 * 1024 + 1)];
    for (const value of hostile) {
      const refused = await errorOf(await h.call('PUT', '/v1/secrets/HOSTILE', { body: { value } }));
      expect(refused).toMatchObject({ status: 400, code: 'request.invalid' });
      if (value.length > 0) expect(refused.message).not.toContain(value.slice(0, 8));
    }
    expect(await errorOf(await h.call('PUT', '/v1/secrets/HOSTILE', { body: { value: 'v', extra: 1 } }))).toMatchObject({
      status: 400,
      code: 'request.invalid',
    });
    expect((await h.call('PUT', '/v1/secrets/EXACT', { body: { value: 'é'.repeat(8 * 1024) } })).status).toBe(201);
    const names = ((await (await h.call('GET', '/v1/secrets')).json()) as { secrets: { name: string }[] }).secrets.map((s) => s.name);
    expect(names).toEqual(['EXACT', 'TOKEN']);
    // Another tenant sees none of them and deletes none of them.
    expect(((await (await h.call('GET', '/v1/secrets', { key: h.b.key })).json()) as { secrets: unknown[] }).secrets).toEqual([]);
    expect((await errorOf(await h.call('DELETE', '/v1/secrets/TOKEN', { key: h.b.key }))).status).toBe(404);
  });
});
