import { createServer, request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { DefaultEgressPolicy } from '@veetbot/mcp-adapter/egress';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DestinationCheck, EgressProxy } from '../src/index';

// The proxy alone, over its real unix socket, with the real egress policy; a scripted resolver
// stands in for DNS (the policy's own option) so a public name can resolve anywhere.
let folder: string;
let origin: { port: number; close: () => void };

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'veetbot-proxy-test-'));
  const server = createServer((_req, res) => res.end('upstream says hi'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  origin = { port: (server.address() as { port: number }).port, close: () => server.close() };
});

afterAll(async () => {
  origin.close();
  await rm(folder, { recursive: true, force: true });
});

async function proxyWith(check: DestinationCheck, name: string): Promise<{ proxy: EgressProxy; socketPath: string }> {
  const proxy = new EgressProxy(check);
  const socketPath = join(folder, `${name}.sock`);
  await proxy.listen(socketPath);
  return { proxy, socketPath };
}

function plainGet(socketPath: string, url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: url, method: 'GET', headers: { host: new URL(url).host } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function connectLine(socketPath: string, authority: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let answer = '';
    socket.on('data', (c: Buffer) => {
      answer += c.toString('latin1');
      if (answer.includes('\r\n')) {
        socket.destroy();
        resolve(answer.split('\r\n')[0]!);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(answer.split('\r\n')[0] ?? ''));
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  });
}

describe('the egress proxy', () => {
  it('refuses metadata, private and (without the switch) loopback destinations, plain and tunnelled', async () => {
    const { proxy, socketPath } = await proxyWith(new DestinationCheck({ egress: new DefaultEgressPolicy({ allowHttp: true }) }), 'strict');
    try {
      expect((await plainGet(socketPath, 'http://169.254.169.254/latest/meta-data/')).status).toBe(403);
      expect((await plainGet(socketPath, `http://127.0.0.1:${origin.port}/`)).status).toBe(403);
      expect(await connectLine(socketPath, '10.0.0.1:443')).toBe('HTTP/1.1 403 Forbidden');
      expect(await connectLine(socketPath, '[::ffff:169.254.169.254]:443')).toBe('HTTP/1.1 403 Forbidden');
      expect(await connectLine(socketPath, 'metadata.google.internal:443')).toBe('HTTP/1.1 403 Forbidden');
      expect(await connectLine(socketPath, 'no-port.example')).toBe('HTTP/1.1 403 Forbidden');
      const { blocked } = proxy.drainBlocked();
      expect(blocked.map((b) => b.code)).toEqual([
        'egress.address_refused',
        'egress.address_refused',
        'egress.address_refused',
        'egress.address_refused',
        'egress.address_refused',
        'egress.url_invalid',
      ]);
    } finally {
      await proxy.close();
    }
  });

  it('pins the address the policy resolved: a name is dialled at that address, once checked', async () => {
    let lookups = 0;
    const egress = new DefaultEgressPolicy({
      allowHttp: true,
      allowPrivateAddresses: true,
      resolve: async () => {
        lookups += 1;
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    const { proxy, socketPath } = await proxyWith(new DestinationCheck({ egress }), 'pinned');
    try {
      const answer = await plainGet(socketPath, `http://public.example:${origin.port}/`);
      expect(answer).toEqual({ status: 200, body: 'upstream says hi' });
      expect(lookups).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it('refuses a name whose answer includes a private address (rebinding) and keeps the list bounded', async () => {
    const egress = new DefaultEgressPolicy({
      allowHttp: true,
      resolve: async () => [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.7', family: 4 },
      ],
    });
    const { proxy, socketPath } = await proxyWith(new DestinationCheck({ egress }), 'rebind');
    try {
      for (let i = 0; i < 20; i++) expect((await plainGet(socketPath, `http://rebind${i}.example/`)).status).toBe(403);
      const drained = proxy.drainBlocked();
      expect(drained.blocked).toHaveLength(16);
      expect(drained.truncated).toBe(true);
      expect(proxy.drainBlocked()).toEqual({ blocked: [], truncated: false });
    } finally {
      await proxy.close();
    }
  });

  it('admits loopback only with the test switch, and nothing else with it', async () => {
    const check = new DestinationCheck({ egress: new DefaultEgressPolicy({ allowHttp: true }), allowLoopback: true });
    const { proxy, socketPath } = await proxyWith(check, 'loopback');
    try {
      expect(await plainGet(socketPath, `http://127.0.0.1:${origin.port}/`)).toEqual({ status: 200, body: 'upstream says hi' });
      expect(await check.checkUrl('http://10.0.0.1/')).toEqual({ allowed: false, code: 'egress.address_refused' });
      expect(await check.checkUrl('http://169.254.169.254/')).toEqual({ allowed: false, code: 'egress.address_refused' });
      expect(await check.checkUrl('ftp://127.0.0.1/')).toEqual({ allowed: false, code: 'egress.scheme_refused' });
    } finally {
      await proxy.close();
    }
  });
});
