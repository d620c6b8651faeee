import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyAddress } from '../src/egress/address-classes';
import { DefaultEgressPolicy, validateServerConfig } from '../src/index';
import { PinnedHttpClient } from '../src/egress/pinned-fetch';
import { until } from './helpers/harness';

describe('DefaultEgressPolicy', () => {
  const publicResolver = async () => [{ address: '93.184.216.34', family: 4 }];

  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.1.1', 'link_local'],
    ['fe80::1', 'link_local'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'metadata'],
  ])('refuses %s (%s), resolved or literal', async (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
    const viaDns = new DefaultEgressPolicy({ resolve: async () => [{ address, family: address.includes(':') ? 6 : 4 }] });
    expect(await viaDns.check('https://mcp.example.com/')).toMatchObject({ allowed: false, code: 'egress.address_refused' });
    const literal = address.includes(':') ? `[${address}]` : address;
    expect(await new DefaultEgressPolicy().check(`https://${literal}/`)).toMatchObject({ allowed: false, code: 'egress.address_refused' });
    expect(new DefaultEgressPolicy().checkStatic(`https://${literal}/`)).toMatchObject({ allowed: false, code: 'egress.address_refused' });
  });

  // docs/adr/0018: every IPv6 form that carries an IPv4 address is judged by that address, and a
  // deprecated range is refused. One row per form: (address, the class that refuses it or null).
  // Each row is checked at write time (validateServerConfig of a tenant URL with the literal
  // host), at dial time as a literal, and at dial time as the answer for a name.
  const EMBEDDED: readonly (readonly [string, string | null])[] = [
    // IPv4-compatible ::/96 (deprecated): the address decides, deprecated if it is public.
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::169.254.169.254', 'metadata'],
    ['::10.0.0.1', 'private'],
    ['::93.184.216.34', 'deprecated'],
    // IPv4-translated ::ffff:0:0/96 (withdrawn).
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::ffff:0:a9fe:a9fe', 'metadata'],
    ['::ffff:0:192.168.0.1', 'private'],
    ['::ffff:0:93.184.216.34', 'deprecated'],
    // IPv4-mapped (already refused; kept as the baseline of the table).
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:93.184.216.34', null],
    // 6to4 2002::/16: the IPv4 address is bits 16-48.
    ['2002:7f00:1::', 'loopback'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:a9fe:a9fe::', 'metadata'],
    ['2002:a00:1:1234::5', 'private'],
    ['2002:c0a8:101::', 'private'],
    ['2002:5db8:d822::1', null],
    // Teredo 2001::/32: server in bits 32-64, client in the last 32 bits inverted (0xff each byte).
    ['2001:0:7f00:1::', 'loopback'],
    ['2001:0:5db8:d822::80ff:fefe', 'loopback'], // client ~80.ff.fe.fe = 127.0.1.1
    ['2001:0:5db8:d822::5601:5601', 'metadata'], // client ~56.01.56.01 = 169.254.169.254
    ['2001:0:a00:1::a247:27dd', 'private'], // server 10.0.0.1
    ['2001:0:a00:1::5601:5601', 'metadata'], // a metadata client outranks a private server
    ['2001:0:5db8:d822::a247:27dd', null], // server and client (a2.47.27.dd inverted) both 93.184.216.34
    // NAT64: the well-known prefix judges the address; the local-use /48 is a local network's.
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['64:ff9b::93.184.216.34', null],
    ['64:ff9b:1::1', 'private'],
    ['64:ff9b:1:ffff::5db8:d822', 'private'],
    // Site-local fec0::/10 (RFC 3879) and ORCHID: deprecated.
    ['fec0::1', 'deprecated'],
    ['feff::1', 'deprecated'],
    ['2001:10::1', 'deprecated'],
    // Outside 2000::/3 and named by no rule: unassigned, nothing to dial.
    ['4000::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['5f00::1', 'reserved'],
    ['2001:2::1', 'reserved'],
    ['1::', 'reserved'],
    // The IPv4 siblings and the ordinary public cases.
    ['192.88.99.1', 'deprecated'],
    ['2606:4700::1111', null],
    ['2001:4860:4860::8888', null],
    ['93.184.216.34', null],
  ];

  it.each(EMBEDDED)('%s is %s at write time, at dial time, and as a resolved name', async (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
    const literal = address.includes(':') ? `[${address}]` : address;
    const written = validateServerConfig(
      { serverId: 'acme', transport: 'http', endpoint: `https://${literal}/mcp`, authScheme: 'none' },
      { source: 'tenant', egress: new DefaultEgressPolicy() },
    );
    const dialLiteral = await new DefaultEgressPolicy().check(`https://${literal}/mcp`);
    const viaDns = new DefaultEgressPolicy({ resolve: async () => [{ address, family: address.includes(':') ? 6 : 4 }] });
    const dialName = await viaDns.check('https://mcp.example.com/mcp');
    if (cls === null) {
      expect(written.ok).toBe(true);
      expect(dialLiteral).toMatchObject({ allowed: true });
      expect(dialName).toMatchObject({ allowed: true, address });
    } else {
      expect(written.ok ? [] : written.errors.map((e) => e.code)).toEqual(['mcp.config.endpoint_refused']);
      expect(dialLiteral).toEqual({
        allowed: false,
        code: 'egress.address_refused',
        message: `The destination address is refused (${cls}).`,
      });
      expect(dialName).toEqual({ allowed: false, code: 'egress.address_refused', message: `The destination address is refused (${cls}).` });
      // One refused answer among public ones refuses the name (the policy dials what it checked).
      const mixed = new DefaultEgressPolicy({
        resolve: async () => [
          { address: '93.184.216.34', family: 4 },
          { address, family: 6 },
        ],
      });
      expect(await mixed.check('https://mcp.example.com/mcp')).toMatchObject({ allowed: false, code: 'egress.address_refused' });
    }
  });

  it('allowPrivateAddresses still refuses an embedded metadata address in every form', async () => {
    const policy = new DefaultEgressPolicy({ allowPrivateAddresses: true });
    for (const address of [
      '::169.254.169.254',
      '::ffff:0:a9fe:a9fe',
      '2002:a9fe:a9fe::',
      '2001:0:a00:1::5601:5601',
      '64:ff9b::a9fe:a9fe',
      '::ffff:169.254.169.254',
    ]) {
      expect(await policy.check(`https://[${address}]/`), address).toMatchObject({ allowed: false, code: 'egress.address_refused' });
    }
    expect(await policy.check('https://[2002:7f00:1::]/')).toMatchObject({ allowed: true });
  });

  it('a zone on a resolved link-local answer is judged by its address', async () => {
    expect(classifyAddress('fe80::1%eth0')).toBe('link_local');
    const policy = new DefaultEgressPolicy({ resolve: async () => [{ address: 'fe80::1%eth0', family: 6 }] });
    expect(await policy.check('https://mcp.example.com/')).toMatchObject({ allowed: false, code: 'egress.address_refused' });
  });

  it('allows a public address and returns the address it checked', async () => {
    expect(classifyAddress('93.184.216.34')).toBeNull();
    expect(await new DefaultEgressPolicy({ resolve: publicResolver }).check('https://mcp.example.com/mcp')).toMatchObject({
      allowed: true,
      address: '93.184.216.34',
      family: 4,
    });
  });

  it('refuses a name with one public and one private answer', async () => {
    const policy = new DefaultEgressPolicy({
      resolve: async () => [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.1', family: 4 },
      ],
    });
    expect(await policy.check('https://mcp.example.com/')).toMatchObject({ allowed: false, code: 'egress.address_refused' });
  });

  it('https only unless http is allowed', async () => {
    expect(await new DefaultEgressPolicy({ resolve: publicResolver }).check('http://mcp.example.com/')).toMatchObject({
      allowed: false,
      code: 'egress.scheme_refused',
    });
    expect(await new DefaultEgressPolicy({ resolve: publicResolver }).check('ftp://mcp.example.com/')).toMatchObject({
      allowed: false,
      code: 'egress.scheme_refused',
    });
    expect(await new DefaultEgressPolicy({ resolve: publicResolver, allowHttp: true }).check('http://mcp.example.com/')).toMatchObject({
      allowed: true,
    });
  });

  it('the host allowlist: exact names and *.suffix', async () => {
    const policy = new DefaultEgressPolicy({ resolve: publicResolver, allowHosts: ['mcp.example.com', '*.tools.example.org'] });
    expect(await policy.check('https://MCP.example.com/x')).toMatchObject({ allowed: true });
    expect(await policy.check('https://a.tools.example.org/x')).toMatchObject({ allowed: true });
    expect(await policy.check('https://tools.example.org/x')).toMatchObject({ allowed: false, code: 'egress.host_not_allowed' });
    expect(await policy.check('https://evil-example.com/x')).toMatchObject({ allowed: false, code: 'egress.host_not_allowed' });
    expect(policy.checkStatic('https://other.example.com/')).toMatchObject({ allowed: false, code: 'egress.host_not_allowed' });
  });

  it('refuses URLs with user information, unparseable URLs and localhost names', async () => {
    const policy = new DefaultEgressPolicy({ resolve: publicResolver });
    expect(await policy.check('https://user:pw@mcp.example.com/')).toMatchObject({ allowed: false, code: 'egress.url_invalid' });
    expect(await policy.check('not a url')).toMatchObject({ allowed: false, code: 'egress.url_invalid' });
    expect(policy.checkStatic('https://localhost:8443/')).toMatchObject({ allowed: false, code: 'egress.address_refused' });
  });

  it('allowPrivateAddresses admits loopback (tests) but never a metadata endpoint', async () => {
    const policy = new DefaultEgressPolicy({ allowPrivateAddresses: true, allowHttp: true });
    expect(await policy.check('http://127.0.0.1:1234/')).toMatchObject({ allowed: true, address: '127.0.0.1' });
    expect(await policy.check('http://169.254.169.254/')).toMatchObject({ allowed: false });
  });
});

describe('PinnedHttpClient: the connection goes to the checked address', () => {
  let server: Server;
  let port: number;
  const seen: { url: string; headers: IncomingHttpHeaders }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }).end();
        return;
      }
      if (req.url === '/endless') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('x'.repeat(200_000));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, path: req.url }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('DNS rebinding: the resolver answers 127.0.0.1 then 127.0.0.2; every request goes to the first, with the original Host', async () => {
    const answers = ['127.0.0.1', '127.0.0.2'];
    let calls = 0;
    const policy = new DefaultEgressPolicy({
      allowHttp: true,
      allowPrivateAddresses: true,
      resolve: async () => [{ address: answers[Math.min(calls++, 1)]!, family: 4 }],
    });
    const decision = await policy.check(`http://mcp.rebind.test:${port}/mcp`);
    if (!decision.allowed) throw new Error(decision.code);
    const client = new PinnedHttpClient(decision, { maxLineBytes: 1024 * 1024 });
    try {
      for (let i = 0; i < 3; i++) {
        const response = await client.fetch(`http://mcp.rebind.test:${port}/mcp?i=${i}`, { method: 'POST', body: '{}' });
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({ ok: true, path: `/mcp?i=${i}` });
      }
    } finally {
      client.close();
    }
    expect(calls).toBe(1);
    expect(seen.at(-1)!.headers.host).toBe(`mcp.rebind.test:${port}`);
  });

  it('refuses a redirect instead of following it', async () => {
    const decision = await new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true }).check(`http://127.0.0.1:${port}/`);
    if (!decision.allowed) throw new Error(decision.code);
    const client = new PinnedHttpClient(decision, { maxLineBytes: 1024 });
    const before = seen.length;
    await expect(client.fetch(`http://127.0.0.1:${port}/redirect`)).rejects.toMatchObject({ code: 'egress.redirect_refused' });
    expect(seen.length - before).toBe(1);
    client.close();
  });

  it('refuses a request to another origin than the one checked', async () => {
    const decision = await new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true }).check(`http://127.0.0.1:${port}/`);
    if (!decision.allowed) throw new Error(decision.code);
    const client = new PinnedHttpClient(decision, { maxLineBytes: 1024 });
    await expect(client.fetch(`http://127.0.0.1:${port + 1}/`)).rejects.toMatchObject({ code: 'egress.host_not_allowed' });
    client.close();
  });

  it('caps a response body that never sends a newline', async () => {
    const decision = await new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true }).check(`http://127.0.0.1:${port}/`);
    if (!decision.allowed) throw new Error(decision.code);
    const client = new PinnedHttpClient(decision, { maxLineBytes: 64 * 1024 });
    const response = await client.fetch(`http://127.0.0.1:${port}/endless`);
    await expect(response.text()).rejects.toBeDefined();
    client.close();
  });

  it('ignores ambient proxy variables', async () => {
    const saved = { HTTP_PROXY: process.env.HTTP_PROXY, http_proxy: process.env.http_proxy };
    process.env.HTTP_PROXY = 'http://127.0.0.1:9';
    process.env.http_proxy = 'http://127.0.0.1:9';
    try {
      const decision = await new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true }).check(`http://127.0.0.1:${port}/`);
      if (!decision.allowed) throw new Error(decision.code);
      const client = new PinnedHttpClient(decision, { maxLineBytes: 1024 });
      const response = await client.fetch(`http://127.0.0.1:${port}/direct`);
      expect(await response.json()).toEqual({ ok: true, path: '/direct' });
      client.close();
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  });

  it('a refused connection is reported as not dispatched', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const closedPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const decision = await new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true }).check(
      `http://127.0.0.1:${closedPort}/`,
    );
    if (!decision.allowed) throw new Error(decision.code);
    const client = new PinnedHttpClient(decision, { maxLineBytes: 1024 });
    await expect(client.fetch(`http://127.0.0.1:${closedPort}/`)).rejects.toMatchObject({
      code: 'mcp.transport.connect_failed',
      dispatched: false,
    });
    client.close();
  });
});

describe('PinnedHttpClient: notifications/cancelled ends the request it names', () => {
  let server: Server;
  let port: number;
  const closed: string[] = [];
  let client: PinnedHttpClient;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const message = JSON.parse(body) as { id?: string | number };
        if (message.id === undefined) return void res.writeHead(202).end();
        res.on('close', () => closed.push(String(message.id)));
        // /silent never answers; /sse starts a stream and never finishes it (a cancelled request).
        if (req.url === '/sse') res.writeHead(200, { 'content-type': 'text/event-stream' }).write('id: 1\ndata: \n\n');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    const decision = await new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true }).check(`http://127.0.0.1:${port}/`);
    if (!decision.allowed) throw new Error(decision.code);
    client = new PinnedHttpClient(decision, { maxLineBytes: 1024 });
  });
  afterAll(async () => {
    client.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const post = (path: string, message: Record<string, unknown>) =>
    client.fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', ...message }) });
  const cancel = (requestId: string | number) => post('/sse', { method: 'notifications/cancelled', params: { requestId } });

  it('a response already streaming ends as a clean end of stream, and its connection is dropped', async () => {
    const response = await post('/sse', { id: 7, method: 'tools/call' });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('id: 1\ndata: \n\n');
    expect(client.openRequests).toBe(1);
    // A cancellation of another request leaves this one alone.
    expect((await cancel(8)).status).toBe(202);
    expect(client.openRequests).toBe(1);
    expect((await cancel(7)).status).toBe(202);
    // Done, not an error: an errored body is the SDK's "SSE stream disconnected".
    expect(await reader.read()).toEqual({ done: true, value: undefined });
    await until(() => closed.includes('7') && client.openRequests === 0);
  });

  it('a request still waiting for its response headers is aborted', async () => {
    const pending = post('/silent', { id: 'a', method: 'tools/call' });
    await until(() => client.openRequests === 1);
    await new Promise((r) => setTimeout(r, 50));
    const refused = expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await cancel('a');
    await refused;
    await until(() => closed.includes('a') && client.openRequests === 0);
  });
});
