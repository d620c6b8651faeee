import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PARAM_HEADERS_MAX_BYTES } from '../src/egress/pinned-fetch';
import { X_MCP_HEADER_INVALID } from '../src/mapping/header-declarations';
import { harness, serverConfig } from './helpers/harness';
import { decodeParamHeader, ModernHttpServer, type ModernTool } from './helpers/modern-http-server';

/*
 * SEP-2243 at protocol revision 2026-07-28 (docs/adr/0064): Mcp-Param-* headers on tools/call,
 * built by the SDK's Client.callTool, and the exclusion of tools whose x-mcp-header declarations
 * are invalid. Every server is a scripted 2026-07-28 server on real loopback HTTP that records
 * the headers as they arrived on the wire.
 */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

async function modern(tools: ModernTool[], revision: ModernHttpServer['revision'] = '2026-07-28'): Promise<ModernHttpServer> {
  const server = new ModernHttpServer();
  server.tools = tools;
  server.revision = revision;
  await server.start();
  cleanups.push(() => server.stop());
  return server;
}

const readOnly = { sideEffect: 'external_read', risk: 'low', idempotency: 'read_only' };
const nonIdempotentWrite = { sideEffect: 'external_write', risk: 'medium', idempotency: 'non_idempotent' };

function setUp(server: ModernHttpServer, classification: Record<string, string> = readOnly) {
  const h = harness(
    [
      serverConfig({
        serverId: 'geo',
        transport: 'http',
        endpoint: server.url,
        authScheme: 'bearer',
        credentialRef: 'env:GEO',
        ...classification,
      }),
    ],
    { credentials: { 'env:GEO': 'operator-token' } },
  );
  cleanups.push(() => h.adapter.shutdown());
  return h;
}

const routed: ModernTool = {
  name: 'route',
  inputSchema: {
    type: 'object',
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      priority: { type: 'integer', 'x-mcp-header': 'Priority' },
      verbose: { type: 'boolean', 'x-mcp-header': 'Verbose' },
      note: { type: 'string', 'x-mcp-header': 'Note' },
      target: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
      query: { type: 'string' },
    },
    required: ['region'],
  },
};

function paramHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => k.startsWith('mcp-param-')));
}

describe('SEP-2243 Mcp-Param-* headers at 2026-07-28', () => {
  it('mirrors the annotated arguments, nested ones too, encoded as the SEP says; unannotated and absent ones never', async () => {
    const server = await modern([routed]);
    const h = setUp(server);
    const prepared = await h.prepare();
    expect(prepared.servers[0]).toMatchObject({ status: 'connected', protocolVersion: '2026-07-28', toolCount: 1 });

    const note = ' Grüße\r\nline two\t';
    const result = await h.call('mcp.geo.route', {
      region: 'us-west1',
      priority: 42,
      verbose: false,
      note,
      target: { zone: 'b' },
      query: 'SELECT 1',
    });
    expect(result).toMatchObject({ ok: true });
    const [call] = server.calls('tools/call');
    expect(paramHeaders(call!.headers)).toEqual({
      'mcp-param-region': 'us-west1',
      'mcp-param-priority': '42',
      'mcp-param-verbose': 'false',
      'mcp-param-note': expect.stringMatching(/^=\?base64\?[A-Za-z0-9+/=]+\?=$/),
      'mcp-param-zone': 'b',
    });
    expect(decodeParamHeader(call!.headers['mcp-param-note'])).toBe(note);
    // The standard headers are the SDK's as before.
    expect(call!.headers['mcp-method']).toBe('tools/call');
    expect(call!.headers['mcp-name']).toBe('route');

    // Absent arguments: no header at all (SEP-2243: "MUST omit").
    await h.call('mcp.geo.route', { region: 'eu' });
    expect(paramHeaders(server.calls('tools/call')[1]!.headers)).toEqual({ 'mcp-param-region': 'eu' });
  });

  it("a tenant's argument never becomes a header of its own: CR/LF, NUL and header syntax ride base64 inside its one header", async () => {
    const server = await modern([routed]);
    const h = setUp(server);
    await h.prepare();
    const hostile = 'x\r\nAuthorization: Bearer stolen\r\nX-Injected: 1\r\n\r\n{"jsonrpc":"2.0"}\u0000';
    expect(await h.call('mcp.geo.route', { region: hostile, note: 'Mcp-Session-Id: forged' })).toMatchObject({ ok: true });
    const [call] = server.calls('tools/call');
    expect(call!.headers.authorization).toBe('Bearer operator-token');
    expect(call!.headers['x-injected']).toBeUndefined();
    expect(call!.headers['mcp-session-id']).toBeUndefined();
    expect(decodeParamHeader(call!.headers['mcp-param-region'])).toBe(hostile);
    // Plain ASCII with a colon is a valid field value: sent as it is, inside its own header.
    expect(call!.headers['mcp-param-note']).toBe('Mcp-Session-Id: forged');
    // Every header name on the wire is one the transport, the credential or a declaration made.
    const names = call!.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    for (const name of names)
      expect(name, name).toMatch(
        /^(host|connection|content-type|content-length|accept|authorization|mcp-method|mcp-name|mcp-protocol-version|mcp-param-(region|note)|idempotency-key|user-agent|accept-encoding|accept-language|sec-fetch-mode)$/,
      );
    // The body still carries the argument as sent (the header is a mirror, never a replacement).
    expect(call!.params?.arguments).toMatchObject({ region: hostile });
  });

  it('declarations naming reserved headers only ever make Mcp-Param-* headers: Authorization, Host, Mcp-Session-Id, Idempotency-Key stay the transport’s', async () => {
    const reserved: ModernTool = {
      name: 'reserved',
      inputSchema: {
        type: 'object',
        properties: {
          a: { type: 'string', 'x-mcp-header': 'Authorization' },
          h: { type: 'string', 'x-mcp-header': 'Host' },
          s: { type: 'string', 'x-mcp-header': 'Mcp-Session-Id' },
          i: { type: 'string', 'x-mcp-header': 'Idempotency-Key' },
          m: { type: 'string', 'x-mcp-header': 'Method' },
          l: { type: 'integer', 'x-mcp-header': 'Content-Length' },
        },
      },
    };
    const server = await modern([reserved]);
    const h = setUp(server);
    expect((await h.prepare()).servers[0]).toMatchObject({ toolCount: 1 });
    expect(
      await h.call('mcp.geo.reserved', { a: 'Bearer tenant-made', h: 'evil.example', s: 'forged', i: 'k1', m: 'resources/read', l: 0 }),
    ).toMatchObject({ ok: true });
    const [call] = server.calls('tools/call');
    expect(call!.headers.authorization).toBe('Bearer operator-token');
    expect(call!.headers.host).toBe(`127.0.0.1:${server.port}`);
    expect(call!.headers['mcp-session-id']).toBeUndefined();
    // The transport's Idempotency-Key is the call's own key (docs/adr/0066), never the tenant's argument.
    const key = (call!.params?._meta as Record<string, unknown> | undefined)?.['io.veetbot/idempotency_key'];
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(call!.headers['idempotency-key']).toBe(key);
    expect(call!.headers['mcp-method']).toBe('tools/call');
    expect(paramHeaders(call!.headers)).toEqual({
      'mcp-param-authorization': 'Bearer tenant-made',
      'mcp-param-host': 'evil.example',
      'mcp-param-mcp-session-id': 'forged',
      'mcp-param-idempotency-key': 'k1',
      'mcp-param-method': 'resources/read',
      'mcp-param-content-length': '0',
    });
  });

  it(`mirrored headers over ${PARAM_HEADERS_MAX_BYTES} bytes are refused before sending: nothing reaches the server, and a write is a plain failure, not uncertain`, async () => {
    const server = await modern([routed]);
    const h = setUp(server, nonIdempotentWrite);
    await h.prepare();
    const result = await h.call('mcp.geo.route', { region: 'r'.repeat(PARAM_HEADERS_MAX_BYTES) });
    expect(result).toMatchObject({
      ok: false,
      failure: { kind: 'invalid_arguments', reason_code: 'tool.invalid_arguments.mcp_param_headers_too_large', retryable: false },
    });
    expect(server.calls('tools/call')).toHaveLength(0);
    // Non-ASCII counts as its base64 form: 2,000 "é" are 4,000 bytes of UTF-8, 5,336 of base64 — still under.
    expect(await h.call('mcp.geo.route', { region: 'é'.repeat(2000) })).toMatchObject({ ok: true });
    expect(decodeParamHeader(server.calls('tools/call')[0]!.headers['mcp-param-region'])).toBe('é'.repeat(2000));
    // The same connection serves the next call.
    expect(await h.call('mcp.geo.route', { region: 'ok' })).toMatchObject({ ok: true });
  });

  it('a result the SDK refuses at this revision is an unreadable answer, not a dropped connection; a write is uncertain', async () => {
    // At 2026-07-28 the SDK's codec reads every tools/call result with its wire schema, whichever
    // path sends it (docs/adr/0064): a content block of no known type fails the whole result.
    const bad = () => ({
      content: [
        { type: 'text', text: 'routed' },
        { type: 'hologram', frames: 3 },
      ],
    });
    const server = await modern([{ ...routed, result: bad }]);
    const h = setUp(server);
    await h.prepare();
    expect(await h.call('mcp.geo.route', { region: 'us' })).toMatchObject({
      ok: false,
      failure: { kind: 'transport', reason_code: 'tool.transport.mcp_response_invalid', external_text: null },
    });
    const writes = await modern([{ ...routed, result: bad }]);
    const w = setUp(writes, nonIdempotentWrite);
    await w.prepare();
    expect(await w.call('mcp.geo.route', { region: 'us' })).toMatchObject({
      ok: false,
      failure: { kind: 'outcome_unknown', reason_code: 'tool.outcome_unknown' },
    });
  });
});

/** Tool definitions whose declarations break one SEP-2243 rule each, and one valid one. */
const invalidTools: Record<string, Record<string, unknown>> = {
  empty: { type: 'object', properties: { v: { type: 'string', 'x-mcp-header': '' } } },
  not_a_string: { type: 'object', properties: { v: { type: 'string', 'x-mcp-header': 7 } } },
  object_typed: { type: 'object', properties: { v: { type: 'object', 'x-mcp-header': 'Data' } } },
  array_typed: { type: 'object', properties: { v: { type: 'array', items: { type: 'string' }, 'x-mcp-header': 'Items' } } },
  null_typed: { type: 'object', properties: { v: { type: 'null', 'x-mcp-header': 'Nil' } } },
  number_typed: { type: 'object', properties: { v: { type: 'number', 'x-mcp-header': 'Score' } } },
  untyped: { type: 'object', properties: { v: { 'x-mcp-header': 'Loose' } } },
  type_list: { type: 'object', properties: { v: { type: ['string', 'null'], 'x-mcp-header': 'Maybe' } } },
  duplicate: {
    type: 'object',
    properties: { a: { type: 'string', 'x-mcp-header': 'Region' }, b: { type: 'string', 'x-mcp-header': 'Region' } },
  },
  duplicate_case: {
    type: 'object',
    properties: { a: { type: 'string', 'x-mcp-header': 'MyField' }, b: { type: 'string', 'x-mcp-header': 'myfield' } },
  },
  space: { type: 'object', properties: { v: { type: 'string', 'x-mcp-header': 'My Region' } } },
  colon: { type: 'object', properties: { v: { type: 'string', 'x-mcp-header': 'Region:Primary' } } },
  crlf: { type: 'object', properties: { v: { type: 'string', 'x-mcp-header': 'Region\r\nX-Injected' } } },
  non_ascii: { type: 'object', properties: { v: { type: 'string', 'x-mcp-header': 'Région' } } },
  control: { type: 'object', properties: { v: { type: 'string', 'x-mcp-header': 'Region\t1' } } },
  at_root: { type: 'object', 'x-mcp-header': 'Root', properties: {} },
  under_items: {
    type: 'object',
    properties: { list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } } },
  },
  under_any_of: { type: 'object', properties: { v: { anyOf: [{ type: 'string', 'x-mcp-header': 'Either' }] } } },
  under_defs: { type: 'object', $defs: { id: { type: 'string', 'x-mcp-header': 'Id' } }, properties: { v: { $ref: '#/$defs/id' } } },
  under_additional_properties: { type: 'object', additionalProperties: { type: 'string', 'x-mcp-header': 'Extra' } },
};

const validTool: ModernTool = {
  name: 'valid_tool',
  inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } }, required: ['region'] },
};

describe('tools with invalid x-mcp-header declarations at 2026-07-28', () => {
  it('are excluded before the registry, each an mcp.tool.rejected with one stable reason; the valid tool stays and is called', async () => {
    const server = await modern([validTool, ...Object.entries(invalidTools).map(([name, inputSchema]) => ({ name, inputSchema }))]);
    const h = setUp(server);
    const prepared = await h.prepare();
    expect(prepared.servers[0]).toMatchObject({ status: 'connected', toolCount: 1 });
    expect([...h.registered.keys()]).toEqual(['mcp.geo.valid_tool']);
    const rejected = h.events.ofType('mcp.tool.rejected').map((e) => e.payload);
    expect(rejected).toHaveLength(Object.keys(invalidTools).length);
    for (const name of Object.keys(invalidTools))
      expect(rejected, name).toContainEqual({ server: 'geo', remote_name: name, reason: X_MCP_HEADER_INVALID });
    // The catalog generation records only what was registered.
    expect(h.catalog.preparations.at(-1)?.generations[0]?.tools.map((t) => t.remoteName)).toEqual(['valid_tool']);
    expect(await h.call('mcp.geo.valid_tool', { region: 'x' })).toMatchObject({ ok: true });
    expect(server.calls('tools/call').map((c) => c.params?.name)).toEqual(['valid_tool']);
  });

  it('an excluded tool conflicts with nothing: a valid tool whose name normalizes to the same registry name stays', async () => {
    const server = await modern([
      { name: 'get-zone', inputSchema: { type: 'object', properties: { z: { type: 'string', 'x-mcp-header': 'Zone' } } } },
      { name: 'get_zone', inputSchema: invalidTools.space! },
    ]);
    const h = setUp(server);
    await h.prepare();
    expect([...h.registered.keys()]).toEqual(['mcp.geo.get_zone']);
    expect(h.events.ofType('mcp.catalog.conflict')).toEqual([]);
    expect(await h.call('mcp.geo.get_zone', { z: 'a' })).toMatchObject({ ok: true });
    expect(server.calls('tools/call')[0]!.params?.name).toBe('get-zone');
  });

  it('a declaration too deep to walk never breaks discovery: that one tool is rejected by the schema checks', async () => {
    let deep: Record<string, unknown> = { type: 'string', 'x-mcp-header': 'Deep' };
    for (let i = 0; i < 100; i++) deep = { type: 'object', properties: { n: deep } };
    const server = await modern([validTool, { name: 'deep', inputSchema: deep }]);
    const h = setUp(server);
    await h.prepare();
    expect([...h.registered.keys()]).toEqual(['mcp.geo.valid_tool']);
    expect(h.events.ofType('mcp.tool.rejected').map((e) => e.payload)).toEqual([
      { server: 'geo', remote_name: 'deep', reason: expect.stringMatching(/^schema\./) },
    ]);
  });

  it('the SDK’s own listTools excludes exactly the same tools (our rules are its rules); a name over our 128-character cap is the one stricter case', async () => {
    const long = 'H'.repeat(129);
    const server = await modern([
      validTool,
      ...Object.entries(invalidTools).map(([name, inputSchema]) => ({ name, inputSchema })),
      { name: 'long_name', inputSchema: { type: 'object', properties: { v: { type: 'string', 'x-mcp-header': long } } } },
    ]);
    const client = new Client({ name: 'reference', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    cleanups.push(async () => {
      warn.mockRestore();
      await client.close();
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const sdkKept = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(sdkKept).toEqual(['long_name', 'valid_tool']);

    const h = setUp(server);
    await h.prepare();
    expect([...h.registered.keys()]).toEqual(['mcp.geo.valid_tool']);
  });
});

describe('before 2026-07-28 nothing of SEP-2243 applies', () => {
  it('at 2025-11-25 the same declarations register and no Mcp-Param-* header is sent', async () => {
    const server = await modern([validTool, { name: 'space', inputSchema: invalidTools.space! }], '2025-11-25');
    const h = setUp(server);
    const prepared = await h.prepare();
    expect(prepared.servers[0]).toMatchObject({ status: 'connected', protocolVersion: '2025-11-25', toolCount: 2 });
    expect(h.events.ofType('mcp.tool.rejected')).toEqual([]);
    expect(await h.call('mcp.geo.valid_tool', { region: 'x' })).toMatchObject({ ok: true });
    expect(paramHeaders(server.calls('tools/call')[0]!.headers)).toEqual({});
  });
});

describe('a 2026-07-28 listing the SDK refuses', () => {
  it('one malformed tool fails the discovery (the SDK codec reads the page strictly), reported as the upstream error it is, not an unreachable server', async () => {
    const server = await modern([validTool, { name: 'no_schema' } as unknown as ModernTool]);
    const h = setUp(server);
    const prepared = await h.prepare();
    expect(prepared.servers[0]).toMatchObject({
      status: 'failed',
      reasonCode: 'tool.upstream_error',
      detail: 'The server answered with a result that is not valid at the negotiated protocol revision.',
    });
    expect(h.registered.size).toBe(0);
  });
});

describe('a server that moves to 2026-07-28 between the pin and a reconnection', () => {
  it('a tool pinned at 2025 whose declarations the new revision excludes is withdrawn; the others call, with their headers', async () => {
    const server = await modern([validTool, { name: 'space', inputSchema: invalidTools.space! }], '2025-11-25');
    const h = setUp(server);
    expect((await h.prepare()).servers[0]).toMatchObject({ protocolVersion: '2025-11-25', toolCount: 2 });
    await h.adapter.releaseSession('s1');
    server.revision = '2026-07-28';
    // The same declarations, so the same catalog hash: only the per-tool comparison can tell.
    const withdrawn = await h.call('mcp.geo.space', { v: 'x' }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(withdrawn).toMatchObject({ code: 'tool.withdrawn', dispatched: false });
    expect(await h.call('mcp.geo.valid_tool', { region: 'eu' })).toMatchObject({ ok: true });
    expect(server.calls('tools/call').map((c) => [c.params?.name, c.headers['mcp-param-region']])).toEqual([['valid_tool', 'eu']]);
  });
});
