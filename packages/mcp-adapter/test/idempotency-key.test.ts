import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callParams, IDEMPOTENCY_KEY_META, idempotencyKeyOf } from '../src/connection/idempotency-key';
import { DefaultEgressPolicy } from '../src/index';
import { PinnedHttpClient } from '../src/egress/pinned-fetch';

/**
 * docs/adr/0066: the key's wire form. The header is derived from the body it travels with, so a
 * request that is not one tools/call carrying a well-formed key never gets one — whatever else
 * is in the body. (End to end against a real server process: apps/integration-tests
 * mcp-idempotency-key.test.ts.)
 */
const key = randomBytes(32).toString('hex');
const call = (meta: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 't', arguments: {}, _meta: meta }, ...extra });

describe('the idempotency key on the wire', () => {
  let server: Server;
  let port = 0;
  const seen: IncomingHttpHeaders[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('tools/call params carry the key in _meta under the reverse-DNS name; none without a key; a malformed key is refused', () => {
    expect(callParams('t', { a: 1 }, key)).toEqual({ name: 't', arguments: { a: 1 }, _meta: { 'io.veetbot/idempotency_key': key } });
    expect(callParams('t', { a: 1 }, undefined)).toEqual({ name: 't', arguments: { a: 1 } });
    // Never on the wire, and the call is not dispatched (NotDispatchedError: nothing was sent).
    expect(() => callParams('t', {}, `${key.slice(0, 60)}\r\nX: y`)).toThrow(
      expect.objectContaining({ code: 'mcp.idempotency_key_invalid', dispatched: false }),
    );
    expect(() => callParams('t', {}, key.toUpperCase())).toThrow(expect.objectContaining({ code: 'mcp.idempotency_key_invalid' }));
  });

  it('the header goes only on a POST of one tools/call request with a well-formed key', async () => {
    const decision = await new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true }).check(`http://127.0.0.1:${port}/mcp`);
    if (!decision.allowed) throw new Error(decision.code);
    // A credential header builder that tries to set the key itself is overridden by the body's.
    const client = new PinnedHttpClient(decision, { maxLineBytes: 1 << 20, headers: async () => ({ 'Idempotency-Key': 'forged' }) });
    const bodies: [string, string | undefined][] = [
      [call({ [IDEMPOTENCY_KEY_META]: key }), key],
      // Not tools/call, a notification, a batch, a malformed or smuggled key: none of ours.
      [JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { _meta: { [IDEMPOTENCY_KEY_META]: key } } }), 'forged'],
      [call({ [IDEMPOTENCY_KEY_META]: key }).replace('"id":7,', ''), 'forged'],
      [`[${call({ [IDEMPOTENCY_KEY_META]: key })}]`, 'forged'],
      [call({ [IDEMPOTENCY_KEY_META]: 'x\r\nInjected: 1' }), 'forged'],
      [call({ 'veetbot/idempotency_key': key }), 'forged'],
    ];
    try {
      for (const [body] of bodies) await client.fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', body });
    } finally {
      client.close();
    }
    expect(seen.map((h) => h['idempotency-key'])).toEqual(bodies.map(([, expected]) => expected));
    expect(seen.some((h) => 'injected' in h)).toBe(false);
    expect(idempotencyKeyOf({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: { [IDEMPOTENCY_KEY_META]: key } } })).toBe(key);
  });
});
