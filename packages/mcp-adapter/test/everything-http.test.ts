import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING_ENTRY } from './helpers/everything';
import { harness, serverConfig } from './helpers/harness';

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('the real server-everything over Streamable HTTP (SSE responses)', () => {
  let server: ChildProcess;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    // Its port comes only from PORT, and it listens on every interface; the test dials loopback.
    server = spawn(process.execPath, [EVERYTHING_ENTRY, 'streamableHttp'], { env: { PATH: process.env['PATH'] ?? '', PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('server-everything did not start')), 20_000);
      server.stderr!.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('listening')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  }, 30_000);

  afterAll(() => {
    server.kill('SIGKILL');
  });

  it('discovers, pins and calls echo through the pinned fetch', async () => {
    const h = harness([serverConfig({ serverId: 'everything', transport: 'http', endpoint: `http://127.0.0.1:${port}/mcp`, authScheme: 'none', sideEffect: 'external_read', risk: 'low', idempotency: 'read_only' })]);
    try {
      const prepared = await h.prepare();
      expect(prepared.servers[0]).toMatchObject({ status: 'connected', transport: 'http' });
      expect([...h.registered.keys()]).toEqual(expect.arrayContaining(['mcp.everything.echo', 'mcp.everything.get_sum', 'mcp.everything.read_resource']));
      for (let i = 0; i < 20; i++) {
        expect(await h.call('mcp.everything.echo', { message: `over http ${i}` })).toMatchObject({ ok: true, content: [{ type: 'text', text: `Echo: over http ${i}` }] });
      }
      expect(await h.call('mcp.everything.get_sum', { a: 2, b: 3 })).toMatchObject({ ok: true, content: [{ type: 'text', text: expect.stringContaining('5') }] });
    } finally {
      await h.adapter.shutdown();
    }
  }, 30_000);
});
