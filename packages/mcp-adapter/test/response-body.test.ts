import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DefaultEgressPolicy } from '../src/index';
import { PinnedHttpClient } from '../src/egress/pinned-fetch';
import { ResponseTooLargeError } from '../src/errors';
import { MessageSizeCap } from '../src/egress/response-body';
import { until } from './helpers/harness';

const bytes = (text: string): Uint8Array => Buffer.from(text, 'utf8');

describe('MessageSizeCap', () => {
  it('a JSON body is one message: newlines do not reset it', () => {
    const cap = new MessageSizeCap(100, false);
    expect(cap.accept(bytes(`{\n${'  "a": 1,\n'.repeat(8)}`))).toBe(true);
    expect(cap.accept(bytes('  "b": 2,\n'.repeat(3)))).toBe(false);
  });

  it('an SSE event ends at an empty line (LF or CRLF, split anywhere): many small events pass', () => {
    const cap = new MessageSizeCap(64, true);
    const event = `event: message\r\ndata: ${'x'.repeat(30)}\r\n\r\n`;
    const stream = event.repeat(200) + `data: ${'y'.repeat(30)}\n\n`.repeat(200);
    // Every split point, including between the \r and the \n of the empty line.
    for (let size = 1; size <= 7; size++) {
      const each = new MessageSizeCap(64, true);
      for (let i = 0; i < stream.length; i += size) expect(each.accept(bytes(stream.slice(i, i + size)))).toBe(true);
    }
    expect(cap.accept(bytes(stream))).toBe(true);
  });

  it("the call's ceiling counts the whole body: many small SSE events past it are refused, and the error names the ceiling (docs/adr/0025)", () => {
    const cap = new MessageSizeCap(64, true, 1000);
    const event = bytes(`data: ${'x'.repeat(30)}\n\n`);
    let accepted = 0;
    while (cap.accept(event)) accepted += event.length;
    expect(accepted).toBeLessThanOrEqual(1000);
    expect(accepted + event.length).toBeGreaterThan(1000);
    expect(cap.exceededLimitBytes).toBe(1000);
    // A JSON body under the per-message cap but over the call's ceiling stops at the ceiling.
    const json = new MessageSizeCap(4096, false, 100);
    expect(json.accept(bytes('x'.repeat(100)))).toBe(true);
    expect(json.accept(bytes('x'))).toBe(false);
    expect(json.exceededLimitBytes).toBe(100);
    // Without a ceiling, the per-message cap is what was exceeded.
    const plain = new MessageSizeCap(10, false);
    expect(plain.accept(bytes('x'.repeat(11)))).toBe(false);
    expect(plain.exceededLimitBytes).toBe(10);
  });

  it('one SSE event in many short data lines is still one message, and is capped', () => {
    const cap = new MessageSizeCap(1024, true);
    let accepted = true;
    for (let i = 0; i < 100 && accepted; i++) accepted = cap.accept(bytes('data: 0123456789\n'));
    expect(accepted).toBe(false);
  });
});

/** A server whose handler the test picks per path; it records how each response ended. */
class Scripted {
  readonly ended = new Map<string, 'finished' | 'closed'>();
  readonly sent = new Map<string, number>();
  readonly blocked = new Set<string>();
  server!: Server;
  port = 0;

  constructor(
    readonly routes: Record<string, (req: IncomingMessage, res: ServerResponse, note: (bytes: number) => void, block: () => void) => void>,
  ) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const path = req.url ?? '/';
      res.on('finish', () => this.ended.set(path, 'finished'));
      res.on('close', () => {
        if (!this.ended.has(path)) this.ended.set(path, 'closed');
      });
      this.routes[path]?.(
        req,
        res,
        (n) => this.sent.set(path, (this.sent.get(path) ?? 0) + n),
        () => this.blocked.add(path),
      );
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Writes `piece` until `total` bytes went out, waiting for drain (and saying when it waits). */
function pump(res: ServerResponse, piece: string, total: number, note: (n: number) => void, block: () => void, tail = ''): void {
  let sent = 0;
  const next = (): void => {
    while (sent < total) {
      if (res.destroyed) return;
      sent += piece.length;
      note(piece.length);
      if (!res.write(piece)) {
        block();
        return void res.once('drain', next);
      }
    }
    res.end(tail);
  };
  next();
}

describe('PinnedHttpClient response bodies: driven by the reader, bounded, never thrown at the process', () => {
  const chunk = 'z'.repeat(16 * 1024);
  const scripted = new Scripted({
    // The SDK's case: a body it does not want (404 on the GET stream), cancelled while it is still arriving.
    '/slow-404': (_req, res, note) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        res.write(chunk);
        note(chunk.length);
      }, 2);
    },
    '/big-json': (_req, res, note, block) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      pump(res, chunk, 256 * 1024 * 1024, note, block);
    },
    '/sse-short-lines': (_req, res, note, block) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      pump(res, 'data: 0123456789abcdef\n'.repeat(512), 256 * 1024 * 1024, note, block);
    },
    '/redirect-forever': (_req, res, note, block) => {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
      pump(res, chunk, 1024 * 1024 * 1024, note, block);
    },
    '/unread': (_req, res, note, block) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      pump(res, `data: ${'q'.repeat(1000)}\n\n`.repeat(16), 1024 * 1024 * 1024, note, block);
    },
  });
  let client: PinnedHttpClient;

  beforeAll(async () => {
    await scripted.start();
    const decision = await new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true }).check(
      `http://127.0.0.1:${scripted.port}/`,
    );
    if (!decision.allowed) throw new Error(decision.code);
    client = new PinnedHttpClient(decision, { maxLineBytes: 256 * 1024 });
  });
  afterAll(async () => {
    client.close();
    await scripted.stop();
  });

  const get = (path: string) => client.fetch(`http://127.0.0.1:${scripted.port}${path}`, { method: 'GET' });

  it('a body cancelled while data still arrives: nothing more is enqueued, the connection is dropped (it crashed the process on Readable.toWeb)', async () => {
    const response = await get('/slow-404');
    const reader = response.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    await until(() => (scripted.sent.get('/slow-404') ?? 0) > 8 * chunk.length);
    await reader.cancel();
    await until(() => scripted.ended.get('/slow-404') === 'closed' && client.openRequests === 0);
    // More data kept coming after the cancel; with the old bridge that was an uncaught
    // ERR_INVALID_STATE, which vitest reports as an unhandled error failing this file.
    await new Promise((r) => setTimeout(r, 50));
  });

  it('Response.body.cancel() straight away (the SDK discarding a body unread)', async () => {
    const response = await get('/slow-404');
    await response.body!.cancel();
    await until(() => client.openRequests === 0);
  });

  it('a JSON body over the cap: the read fails with ResponseTooLargeError and the connection is dropped', async () => {
    const response = await get('/big-json');
    await expect(response.text()).rejects.toBeInstanceOf(ResponseTooLargeError);
    await until(() => scripted.ended.get('/big-json') === 'closed' && client.openRequests === 0);
    expect(scripted.sent.get('/big-json')!).toBeLessThan(256 * 1024 * 1024);
  });

  it('one SSE event made of short lines, over the cap: ResponseTooLargeError (a line cap alone let it through)', async () => {
    const response = await get('/sse-short-lines');
    await expect(response.text()).rejects.toMatchObject({ code: 'mcp.transport.response_too_large' });
    await until(() => scripted.ended.get('/sse-short-lines') === 'closed');
  });

  it('a redirect with an endless body is refused and its connection dropped, not drained', async () => {
    await expect(get('/redirect-forever')).rejects.toMatchObject({ code: 'egress.redirect_refused' });
    await until(() => scripted.ended.get('/redirect-forever') === 'closed');
    expect(scripted.sent.get('/redirect-forever')!).toBeLessThan(1024 * 1024 * 1024);
  });

  it('backpressure: a body nobody reads stops the server at the socket buffers, not at the end of a gigabyte', async () => {
    const response = await get('/unread');
    await until(() => scripted.blocked.has('/unread'));
    const atBlock = scripted.sent.get('/unread')!;
    expect(atBlock).toBeLessThan(64 * 1024 * 1024);
    await response.body!.cancel();
    await until(() => scripted.ended.get('/unread') === 'closed');
  });
});
