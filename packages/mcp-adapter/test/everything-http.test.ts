import { spawn, type ChildProcess } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { createServer } from 'node:net';
import { Client, SdkError, SdkErrorCode, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LooseCallTool } from '../src/connection/result-schemas';
import { PinnedHttpClient } from '../src/egress/pinned-fetch';
import { EVERYTHING_ENTRY } from './helpers/everything';
import { harness, loopbackEgress, serverConfig } from './helpers/harness';

/** This process's TCP sockets that keep it alive: in-flight HTTP requests (an idle pooled one is unref'd). */
const openSockets = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;

/** `read()` once it equals `want`, or its value when `ms` have passed. */
async function settle(read: () => number, want: number, ms = 5_000): Promise<number> {
  const end = Date.now() + ms;
  while (read() !== want && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  return read();
}

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
    server = spawn(process.execPath, [EVERYTHING_ENTRY, 'streamableHttp'], {
      env: { PATH: process.env.PATH ?? '', PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
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
    const h = harness([
      serverConfig({
        serverId: 'everything',
        transport: 'http',
        endpoint: `http://127.0.0.1:${port}/mcp`,
        authScheme: 'none',
        sideEffect: 'external_read',
        risk: 'low',
        idempotency: 'read_only',
      }),
    ]);
    try {
      const prepared = await h.prepare();
      // Over HTTP the client probes with server/discover first; server-everything is 2025-era, so
      // the probe falls back to initialize and the session speaks 2025-11-25 (ADR 0044).
      expect(prepared.servers[0]).toMatchObject({ status: 'connected', transport: 'http', protocolVersion: '2025-11-25' });
      expect([...h.registered.keys()]).toEqual(
        expect.arrayContaining(['mcp.everything.echo', 'mcp.everything.get_sum', 'mcp.everything.read_resource']),
      );
      for (let i = 0; i < 20; i++) {
        expect(await h.call('mcp.everything.echo', { message: `over http ${i}` })).toMatchObject({
          ok: true,
          content: [{ type: 'text', text: `Echo: over http ${i}` }],
        });
      }
      expect(await h.call('mcp.everything.get_sum', { a: 2, b: 3 })).toMatchObject({
        ok: true,
        content: [{ type: 'text', text: expect.stringContaining('5') }],
      });
    } finally {
      await h.adapter.shutdown();
    }
  }, 30_000);

  describe('timed-out and cancelled calls leave nothing open on the connection', () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    beforeEach(() => {
      warnings.length = 0;
      process.on('warning', onWarning);
    });
    afterEach(() => {
      process.off('warning', onWarning);
    });
    const listenerWarnings = () => warnings.filter((w) => w.name === 'MaxListenersExceededWarning');

    it('twelve calls timed out or cancelled while the server still works on them: the requests end, the same connection serves the next call', async () => {
      const h = harness([
        serverConfig({
          serverId: 'everything',
          transport: 'http',
          endpoint: `http://127.0.0.1:${port}/mcp`,
          authScheme: 'none',
          sideEffect: 'external_read',
          risk: 'low',
          idempotency: 'read_only',
          requestTimeoutSeconds: 0.5,
        }),
      ]);
      try {
        await h.prepare();
        expect(await h.call('mcp.everything.echo', { message: 'warm' })).toMatchObject({ ok: true });
        // The standing GET stream, and no request of the echo left over.
        const baseline = openSockets();
        // The server takes 30 s; the adapter gives up at 0.5 s (or the run is cancelled) and the
        // server never answers a cancelled request, so only the client can end these requests.
        const slow = { duration: 30, steps: 1 };
        const timedOut = Array.from({ length: 6 }, () => h.call('mcp.everything.trigger_long_running_operation', slow));
        const run = new AbortController();
        const cancelled = Array.from({ length: 6 }, () =>
          h.call('mcp.everything.trigger_long_running_operation', slow, 's1', { cancellation: run.signal }),
        );
        const settled = Promise.allSettled(cancelled);
        setTimeout(() => run.abort(new Error('run cancelled')), 100);
        for (const outcome of await Promise.all(timedOut))
          expect(outcome).toMatchObject({ ok: false, failure: { kind: 'timeout', reason_code: 'tool.timeout' } });
        for (const outcome of await settled)
          expect(outcome).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: 'run cancelled' }) });
        expect(await settle(openSockets, baseline)).toBe(baseline);
        expect(await h.call('mcp.everything.echo', { message: 'after' })).toMatchObject({
          ok: true,
          content: [{ type: 'text', text: 'Echo: after' }],
        });
        // The deliberate ends were not taken for a dropped connection: no close, no reconnect.
        expect(h.events.ofType('mcp.server.connected')).toHaveLength(1);
        expect(h.events.ofType('mcp.server.disconnected')).toEqual([]);
        expect(listenerWarnings()).toEqual([]);
      } finally {
        await h.adapter.shutdown();
      }
    }, 30_000);

    it('twelve concurrent echo calls on one connection raise no MaxListenersExceededWarning', async () => {
      const h = harness([
        serverConfig({
          serverId: 'everything',
          transport: 'http',
          endpoint: `http://127.0.0.1:${port}/mcp`,
          authScheme: 'none',
          sideEffect: 'external_read',
          risk: 'low',
          idempotency: 'read_only',
        }),
      ]);
      try {
        await h.prepare();
        const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => h.call('mcp.everything.echo', { message: `c${i}` })));
        outcomes.forEach((outcome, i) => {
          expect(outcome).toMatchObject({ ok: true, content: [{ type: 'text', text: `Echo: c${i}` }] });
        });
        await new Promise((r) => setImmediate(r));
        expect(listenerWarnings()).toEqual([]);
      } finally {
        await h.adapter.shutdown();
      }
    }, 30_000);

    it('the pinned fetch under the SDK client: each timed-out or aborted request ends cleanly, one listener on the transport signal', async () => {
      const decision = await loopbackEgress().check(`http://127.0.0.1:${port}/mcp`);
      if (!decision.allowed) throw new Error(decision.code);
      const http = new PinnedHttpClient(decision, { maxLineBytes: 1024 * 1024 });
      const signals = new Set<AbortSignal>();
      const transport = new StreamableHTTPClientTransport(decision.url, {
        fetch: (url, init) => {
          if (init?.signal) signals.add(init.signal);
          return http.fetch(url, init);
        },
        reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
      });
      const client = new Client({ name: 'test', version: '1' }, { capabilities: {} });
      const errors: string[] = [];
      client.onerror = (error) => errors.push(error.message);
      try {
        await client.connect(transport);
        // The standing GET stream opens right after initialization.
        expect(await settle(() => http.openRequests, 1)).toBe(1);
        const slow = { name: 'trigger-long-running-operation', arguments: { duration: 30, steps: 1 } };
        const timedOut = Array.from({ length: 6 }, () =>
          client.request({ method: 'tools/call', params: slow }, LooseCallTool, { timeout: 300 }),
        );
        const aborts = Array.from({ length: 6 }, () => new AbortController());
        const aborted = aborts.map((a) =>
          client.request({ method: 'tools/call', params: slow }, LooseCallTool, { timeout: 20_000, signal: a.signal }),
        );
        const settled = Promise.allSettled([...timedOut, ...aborted]);
        // Every call has its own request open at once, all under the transport's one signal.
        expect(await settle(() => http.openRequests, 13)).toBe(13);
        expect(signals.size).toBe(1);
        const [signal] = [...signals];
        expect(getEventListeners(signal!, 'abort')).toHaveLength(1);
        setTimeout(
          () =>
            aborts.forEach((a) => {
              a.abort(new Error('run cancelled'));
            }),
          100,
        );
        const outcomes = await settled;
        for (const outcome of outcomes) expect(outcome).toMatchObject({ status: 'rejected', reason: expect.any(SdkError) });
        expect(outcomes.slice(0, 6).map((o) => (o as PromiseRejectedResult).reason.code)).toEqual(
          Array(6).fill(SdkErrorCode.RequestTimeout),
        );
        expect(await settle(() => http.openRequests, 1)).toBe(1);
        expect(getEventListeners(signal!, 'abort')).toHaveLength(1);
        // A clean end, never "SSE stream disconnected" (which the adapter takes for a dropped
        // connection, mcp-connection.ts). Two reports are expected and not acted on: a clean
        // end after the server's priming event makes the SDK try to resume the stream, which
        // with no retries is only "Maximum reconnection attempts"; and a request cancelled
        // before its response headers came back (a loaded server can take longer than the
        // 300 ms timeout to answer) is aborted, and that rejection reaches only onerror.
        const benign = new Set(['Maximum reconnection attempts (0) exceeded.', 'The request was cancelled.']);
        expect(errors.filter((m) => !benign.has(m))).toEqual([]);
        expect(await client.callTool({ name: 'echo', arguments: { message: 'still here' } })).toMatchObject({
          content: [{ type: 'text', text: 'Echo: still here' }],
        });
        expect(await settle(() => http.openRequests, 1)).toBe(1);
        expect(listenerWarnings()).toEqual([]);
      } finally {
        await client.close();
        http.close();
      }
      // The transport's close aborts its signal: the standing stream ends, and the listener goes.
      expect(await settle(() => http.openRequests, 0)).toBe(0);
      expect(getEventListeners([...signals][0]!, 'abort')).toHaveLength(0);
    }, 30_000);
  });
});
