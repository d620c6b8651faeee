import { randomBytes } from 'node:crypto';
import { SealedMcpTokenStore } from '@veetbot/credential-broker';
import { provisionTenantKey } from '@veetbot/composition';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, openApiHarness, type ApiHarness } from './harness';

/*
 * docs/adr/0080: the calling principal's delegated MCP grants over the api — sealed in
 * mcp_delegated_grants with the api's own tenant secrets keyring, listed without tokens,
 * revocable by the principal they belong to and by no one else.
 */
const ACCESS = `at-${randomBytes(16).toString('base64url')}`;
const REFRESH = `rt-${randomBytes(16).toString('base64url')}`;
const forms = (value: string) => [
  value,
  Buffer.from(value).toString('base64'),
  Buffer.from(value).toString('hex'),
  encodeURIComponent(value),
];
const ISSUER = 'https://auth.example.com';
const EXPIRES = new Date('2026-12-03T20:00:00.000Z');

let h: ApiHarness;
let tokens: SealedMcpTokenStore;
let colleague: string;
const captured: string[] = [];
let restore: () => void;

beforeAll(async () => {
  h = await openApiHarness({ worker: false });
  // Everything this process prints while grants are saved, listed and revoked.
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  const tee =
    (write: typeof process.stdout.write) =>
    (chunk: unknown, ...rest: unknown[]): boolean => {
      captured.push(String(chunk));
      return write(chunk as string, ...(rest as []));
    };
  process.stdout.write = tee(out) as typeof process.stdout.write;
  process.stderr.write = tee(err) as typeof process.stderr.write;
  restore = () => {
    process.stdout.write = out;
    process.stderr.write = err;
  };
  tokens = new SealedMcpTokenStore(h.system.stores.mcpDelegatedGrants, h.system.deps.secretKeyring);
  colleague = (
    await provisionTenantKey(h.system.stores, {
      tenantId: h.a.tenantId,
      tenantName: h.a.tenantId,
      principalId: 'colleague',
      scopes: ['workspace.read'],
      now: new Date(),
    })
  ).key;
  const owner = { tenantId: h.a.tenantId, principalId: h.a.principal.principal_id };
  const grant = {
    accessToken: ACCESS,
    refreshToken: REFRESH,
    tokenType: 'Bearer',
    expiresAt: EXPIRES,
    scope: 'files.read',
    issuer: ISSUER,
  };
  await tokens.save({ ...owner, serverId: 'docs' }, grant);
  await tokens.save({ ...owner, serverId: 'acme' }, { ...grant, expiresAt: null });
}, 120_000);

afterAll(async () => {
  restore?.();
  await h?.close();
});

describe('GET and DELETE /v1/mcp/authorizations (docs/adr/0080)', () => {
  it("lists the calling principal's grants by server: issuer and times, never a token", async () => {
    const response = await h.call('GET', '/v1/mcp/authorizations');
    expect(response.status).toBe(200);
    const text = await response.text();
    for (const token of [ACCESS, REFRESH]) for (const form of forms(token)) expect(text).not.toContain(form);
    const body = JSON.parse(text) as { authorizations: Record<string, unknown>[] };
    expect(body.authorizations.map((a) => a.server_id)).toEqual(['acme', 'docs']);
    expect(body.authorizations[1]).toEqual({
      server_id: 'docs',
      issuer: ISSUER,
      expires_at: EXPIRES.toISOString(),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(body.authorizations[0]!.expires_at).toBeNull();
  });

  it('another principal of the tenant, and another tenant, see none of them and cannot revoke them', async () => {
    for (const key of [colleague, h.b.key]) {
      const listed = await h.call('GET', '/v1/mcp/authorizations', { key });
      expect(listed.status).toBe(200);
      expect(await listed.json()).toEqual({ authorizations: [] });
      expect(await errorOf(await h.call('DELETE', '/v1/mcp/authorizations/docs', { key }))).toMatchObject({
        status: 404,
        code: 'not_found',
      });
    }
    expect(await tokens.load({ tenantId: h.a.tenantId, principalId: h.a.principal.principal_id, serverId: 'docs' })).toMatchObject({
      accessToken: ACCESS,
    });
  });

  it('the principal revokes one grant: 204, then 404; the tokens are gone; a malformed server id is 404, never echoed', async () => {
    expect((await h.call('DELETE', '/v1/mcp/authorizations/docs')).status).toBe(204);
    expect(await errorOf(await h.call('DELETE', '/v1/mcp/authorizations/docs'))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await tokens.load({ tenantId: h.a.tenantId, principalId: h.a.principal.principal_id, serverId: 'docs' })).toBeNull();
    const listed = (await (await h.call('GET', '/v1/mcp/authorizations')).json()) as { authorizations: { server_id: string }[] };
    expect(listed.authorizations.map((a) => a.server_id)).toEqual(['acme']);
    for (const hostile of ['..%2F..%2Fetc', 'Docs', `${'a'.repeat(40)}`, '%00', "x'or'1"]) {
      const refused = await errorOf(await h.call('DELETE', `/v1/mcp/authorizations/${hostile}`));
      expect(refused).toMatchObject({ status: 404, code: 'not_found' });
      expect(refused.message).not.toContain(decodeURIComponent(hostile).slice(0, 8));
    }
  });

  it('the OpenAPI document has both routes, and the listed shape has no token field', async () => {
    const document = (await (await h.call('GET', '/v1/openapi.json', { key: null })).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    expect(Object.keys(document.paths['/v1/mcp/authorizations'] ?? {})).toEqual(['get']);
    expect(Object.keys(document.paths['/v1/mcp/authorizations/{server_id}'] ?? {})).toEqual(['delete']);
    const listed = JSON.stringify(document.paths['/v1/mcp/authorizations']!.get!.responses);
    expect(listed).toContain('"issuer"');
    expect(listed.toLowerCase()).not.toContain('token');
  });

  it('without a key: 401 auth.missing', async () => {
    expect(await errorOf(await h.call('GET', '/v1/mcp/authorizations', { key: null }))).toMatchObject({
      status: 401,
      code: 'auth.missing',
    });
    expect(await errorOf(await h.call('DELETE', '/v1/mcp/authorizations/acme', { key: null }))).toMatchObject({
      status: 401,
      code: 'auth.missing',
    });
  });

  it("the table's raw bytes, the events and everything printed hold no token in any common form", async () => {
    const native = h.database.native;
    if (native.driver !== 'pglite') throw new Error('the api harness runs on PGlite');
    // As the owner (no row-level security): every column of every row, and the ciphertext in hex.
    const dump = await native.client.query<{ row: string; hex: string }>(
      "select t::text as row, encode(ciphertext, 'hex') as hex, encode(ciphertext, 'escape') as raw from mcp_delegated_grants t",
    );
    expect(dump.rows.length).toBeGreaterThan(0);
    const events = await native.client.query('select payload::text as p from events');
    const haystack = [
      JSON.stringify(dump.rows),
      JSON.stringify(events.rows),
      captured.join(''),
      JSON.stringify(h.errors.map((e) => String(e))),
    ].join('\n');
    for (const token of [ACCESS, REFRESH])
      for (const form of [...forms(token), Buffer.from(token).toString('hex')]) expect(haystack).not.toContain(form);
  });
});
