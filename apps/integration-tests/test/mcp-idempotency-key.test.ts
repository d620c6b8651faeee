import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { mcpToolName } from '@veetbot/domain';
import { DedupServer } from '../src/dedup-server';
import { drivers } from '../src/test-database';
import { expectOutcome, useMcpSuite } from './mcp-suite';

/**
 * Issue 25 item 1 (docs/adr/0066): § Idempotency's "passing the application key through … verbatim"
 * on MCP. Against servers/dedup-server.ts as a real process — over HTTP (started here) and over
 * stdio (started by the adapter) — which deduplicates by the key and records what it received:
 * the key is in tools/call `params._meta["io.veetbot/idempotency_key"]`, and over HTTP also the
 * `Idempotency-Key` header of that call's POST and of no other request. And item 2's ladder half:
 * a CONDITIONALLY_IDEMPOTENT call refused with a 401 after a rotation is replayed once with the
 * same key (the recovery table's "replay with the same key"), where it used to become UNCERTAIN.
 */
const create = mcpToolName('dedup', 'create_ticket');
const servers: DedupServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.dispose()));
});
async function started(server: Promise<DedupServer>): Promise<DedupServer> {
  const s = await server;
  servers.push(s);
  return s;
}

describe.each(drivers())('the idempotency key reaches the MCP server (%s)', (driver) => {
  const suite = useMcpSuite(driver);

  it('over HTTP: in _meta and the Idempotency-Key header of the tools/call POST only, verbatim; a second call is a new key', async () => {
    const server = await started(DedupServer.http());
    const scene = await suite.open({ servers: [server.httpConfig('dedup')] });
    expect(scene.preparation.servers[0]?.status).toBe('connected');

    const first = await scene.run(create, { title: 'first' });
    expectOutcome(first.item, 'succeeded', 'tool.ok');
    const second = await scene.run(create, { title: 'second' });
    expectOutcome(second.item, 'succeeded', 'tool.ok');
    expect(first.row.idempotencyKey).toMatch(/^[0-9a-f]{64}$/);
    expect(second.row.idempotencyKey).not.toBe(first.row.idempotencyKey);

    const received = await server.received();
    const calls = received.filter((m) => m.method === 'tools/call');
    expect(calls.map((m) => ({ tool: m.tool, meta: m.meta_key, header: m.header_key }))).toEqual([
      { tool: 'create_ticket', meta: first.row.idempotencyKey, header: first.row.idempotencyKey },
      { tool: 'create_ticket', meta: second.row.idempotencyKey, header: second.row.idempotencyKey },
    ]);
    // The handshake, the listing and the notifications carry neither.
    const others = received.filter((m) => m.method !== 'tools/call');
    expect(others.map((m) => m.method)).toEqual(expect.arrayContaining(['initialize', 'tools/list']));
    expect(others.filter((m) => m.meta_key !== null || m.header_key !== null)).toEqual([]);
    // The arguments are the model's, untouched by the key.
    expect(calls.map((m) => m.arguments)).toEqual([{ title: 'first' }, { title: 'second' }]);
    expect((await server.effects()).map((e) => e.key)).toEqual([first.row.idempotencyKey, second.row.idempotencyKey]);
  });

  it('over stdio: in _meta, verbatim (no header on a pipe)', async () => {
    const server = await started(DedupServer.stdio());
    const scene = await suite.open({ servers: [server.stdioConfig('dedup')] });
    expect(scene.preparation.servers[0]?.status).toBe('connected');

    const { item, row } = await scene.run(create, { title: 'over a pipe' });
    expectOutcome(item, 'succeeded', 'tool.ok');
    const calls = (await server.received()).filter((m) => m.method === 'tools/call');
    expect(calls.map((m) => ({ meta: m.meta_key, header: m.header_key, transport: m.transport }))).toEqual([
      { meta: row.idempotencyKey, header: null, transport: 'stdio' },
    ]);
    expect(await server.effects()).toEqual([{ key: row.idempotencyKey, title: 'over a pipe', ticket: 1 }]);
  });

  it('the 401 ladder replays a CONDITIONALLY_IDEMPOTENT call once with the same key; a NON_IDEMPOTENT one stays UNCERTAIN', async () => {
    const value = `tok_${randomBytes(12).toString('hex')}`;
    const server = await started(DedupServer.http({ token: value }));
    const bearer = { authScheme: 'bearer' as const, credentialRef: 'env:DEDUP_TOKEN' };
    const brokerEnv = { DEDUP_TOKEN: value };
    const scene = await suite.open({
      servers: [server.httpConfig('dedup', bearer), server.httpConfig('dedupw', { ...bearer, idempotency: 'non_idempotent' })],
      brokerEnv,
    });
    expect(scene.preparation.servers.map((s) => s.status)).toEqual(['connected', 'connected']);

    // The operator rotates: the server takes only the new token; the broker has it.
    const rotated = `tok_${randomBytes(12).toString('hex')}`;
    await server.script({ token: rotated });
    brokerEnv.DEDUP_TOKEN = rotated;

    const replayed = await scene.run(create, { title: 'after a rotation' });
    expectOutcome(replayed.item, 'succeeded', 'tool.ok');
    const key = replayed.row.idempotencyKey;
    const posts = (await server.received()).filter((m) => m.method === 'tools/call');
    // Exactly one retry, the same key both times (the first refused before it was applied).
    expect(posts.map((m) => ({ status: m.status ?? 200, meta: m.meta_key, header: m.header_key }))).toEqual([
      { status: 401, meta: key, header: key },
      { status: 200, meta: key, header: key },
    ]);
    expect((await server.effects()).filter((e) => e.key === key)).toHaveLength(1);

    // NON_IDEMPOTENT, watermark set: UNCERTAIN, never retried (§ 401 ladder step 4).
    await server.script({ token: `tok_${randomBytes(12).toString('hex')}` });
    brokerEnv.DEDUP_TOKEN = `tok_${randomBytes(12).toString('hex')}`;
    const before = (await server.received()).length;
    const uncertain = await scene.run(mcpToolName('dedupw', 'create_ticket'), { title: 'not twice' });
    expectOutcome(uncertain.item, 'uncertain', 'tool.outcome_unknown');
    const after = (await server.received()).slice(before).filter((m) => m.method === 'tools/call');
    expect(after.map((m) => m.status ?? 200)).toEqual([401]);
  });
});
