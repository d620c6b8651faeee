import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { mcpToolName } from '@veetbot/domain';
import { drivers } from '../src/test-database';
import { httpServer } from '../src/mcp-harness';
import { ScriptableHttpServer } from '../src/mcp-servers';
import { UNAUTHORIZED_BODY_TEXT } from '../src/scripted-texts';
import { eventsMentioning, expectOutcome, useMcpSuite } from './mcp-suite';

/**
 * Hard gate 15: "The re-authentication ladder is bounded and routes through recovery. Against a
 * scripted server that returns 401 on demand: exactly one re-authentication per server per
 * session, one retry of an idempotent call, UNCERTAIN rather than a retry for a non-idempotent
 * call whose watermark is set, unavailable with tool.server_unauthorized thereafter, and a run
 * that continues throughout."
 *
 * The scripted server requires `Authorization: Bearer <token>`; "rotating" sets a new token on
 * the server (the old one is refused from then on) and, where the test says so, the new value
 * in the broker (what an operator rotating a secret does).
 */
const token = (): string => `tok_${randomBytes(12).toString('hex')}`;
const readItem = mcpToolName('scripted', 'read_item');
const createTicket = mcpToolName('scripted', 'create_ticket');

function bearer(serverId: string, url: string, over: Parameters<typeof httpServer>[2] = {}) {
  return httpServer(serverId, url, { authScheme: 'bearer', credentialRef: 'env:SCRIPTED_TOKEN', ...over });
}

describe.each(drivers())('Hard gate 15 — the 401 ladder is bounded and routes through recovery (%s)', (driver) => {
  const suite = useMcpSuite(driver);

  it('(a) 401 at initialize: failed tool.auth_failed, no tools registered, no second attempt, the session proceeds', async () => {
    const value = token();
    const server = await ScriptableHttpServer.start({ token: value });
    await server.control({ action: 'fail_initialize', enabled: true });
    const scene = await suite.open({ servers: [bearer('scripted', server.url)], brokerEnv: { SCRIPTED_TOKEN: value } });

    expect(scene.preparation.servers).toHaveLength(1);
    const prepared = scene.preparation.servers[0]!;
    expect({ status: prepared.status, reasonCode: prepared.reasonCode, toolCount: prepared.toolCount }).toEqual({
      status: 'failed',
      reasonCode: 'tool.auth_failed',
      toolCount: 0,
    });
    expect(scene.preparation.registration.registered.filter((name) => name.startsWith('mcp.'))).toEqual([]);
    expect(scene.pinned.toolNames.filter((name) => name.startsWith('mcp.'))).toEqual([]);
    // Terminal at connect: one initialize, never a second one with the same credential.
    expect((await server.counts()).initialize).toBe(1);
    const journal = await server.journal();
    expect(journal.filter((entry) => entry.rpcMethod === 'initialize').map((entry) => entry.status)).toEqual([401]);

    // mcp.server.disconnected carries the code; the server's 401 body is external text and goes nowhere.
    const events = await scene.events();
    const disconnected = events.filter((event) => event.type === 'mcp.server.disconnected');
    expect(disconnected.length).toBeGreaterThanOrEqual(1);
    expect(eventsMentioning(disconnected, 'tool.auth_failed').length).toBeGreaterThanOrEqual(1);
    expect(eventsMentioning(events, UNAUTHORIZED_BODY_TEXT)).toEqual([]);
    expect(eventsMentioning(events, value)).toEqual([]);

    // The session proceeds without that server.
    const builtin = await scene.run('math.evaluate', { expression: '40 + 2' });
    expectOutcome(builtin.item, 'succeeded', 'tool.ok');
    // And the server's tool is not there to call.
    const missing = await scene.execute(scene.call(readItem, { id: 'x' }));
    expect(missing.kind === 'concluded' && missing.item.outcome.status).toBe('denied');
    expect((await server.counts()).calls.read_item).toBeUndefined();
  });

  it('(b)+(d) mid-session 401 after a rotation: one re-authentication, one retry that succeeds; the next 401 is unavailable tool.server_unauthorized without further dialling', async () => {
    const first = token();
    const server = await ScriptableHttpServer.start({ token: first });
    const scene = await suite.open({
      servers: [bearer('scripted', server.url, { sideEffect: 'external_read', idempotency: 'idempotent' })],
      brokerEnv: { SCRIPTED_TOKEN: first },
    });
    expect(scene.preparation.servers[0]?.status).toBe('connected');
    const warm = await scene.run(readItem, { id: 'warm' });
    expectOutcome(warm.item, 'succeeded', 'tool.ok');

    // (b) The operator rotates the credential: the server now refuses the old token, the broker
    // holds the new one. The connection still presents the old one.
    const second = token();
    await server.control({ action: 'require_token', token: second });
    scene.brokerEnv.SCRIPTED_TOKEN = second;
    await server.control({ action: 'reset_counts' });

    const retried = await scene.run(readItem, { id: 'b' });
    expectOutcome(retried.item, 'succeeded', 'tool.ok');
    expect(retried.row.status).toBe('succeeded');
    // The ladder ran once: one 401, one retry.
    expect((await server.counts()).calls.read_item).toBe(2);
    const readCalls = (await server.journal()).filter((entry) => entry.tool === 'read_item');
    expect(readCalls.slice(-2).map((entry) => entry.status)).toEqual([401, 200]);
    expect(await scene.eventsOfType('mcp.server.reauthenticated')).toHaveLength(1);

    // The run continues.
    expectOutcome((await scene.run('math.evaluate', { expression: '1 + 2' })).item, 'succeeded', 'tool.ok');

    // (d) The credential is good but the server answers 401 again: the ladder was used, so the
    // next failure is terminal for this server in this session.
    await server.control({ action: 'fail_next_calls', count: 1 });
    const refused = await scene.run(readItem, { id: 'd1' });
    expectOutcome(refused.item, 'unavailable', 'tool.server_unauthorized');
    expect((await server.counts()).calls.read_item).toBe(3);
    expect(await scene.eventsOfType('mcp.server.reauthenticated')).toHaveLength(1);

    // Every later call to that server returns the same without dialling — even though the
    // server would now answer 200. (A dial is any POST to the MCP endpoint.)
    const posts = async () => (await server.journal()).filter((entry) => entry.httpMethod === 'POST').length;
    const before = await posts();
    const again = await scene.run(readItem, { id: 'd2' });
    expectOutcome(again.item, 'unavailable', 'tool.server_unauthorized');
    const third = await scene.run(createTicket, { title: 'never sent' });
    expectOutcome(third.item, 'unavailable', 'tool.server_unauthorized');
    expect(await posts()).toBe(before);
    expect((await server.counts()).calls.read_item).toBe(3);
    expect((await server.counts()).calls.create_ticket).toBeUndefined();

    // The run continues throughout.
    expectOutcome((await scene.run('math.evaluate', { expression: '2 + 2' })).item, 'succeeded', 'tool.ok');

    // External text from the 401s, and the token values, went nowhere the model or the event
    // stream can see.
    const events = await scene.events();
    expect(eventsMentioning(events, UNAUTHORIZED_BODY_TEXT)).toEqual([]);
    expect(eventsMentioning(events, first)).toEqual([]);
    expect(eventsMentioning(events, second)).toEqual([]);
    for (const item of [refused.item, again.item, third.item]) {
      expect(JSON.stringify(item)).not.toContain(UNAUTHORIZED_BODY_TEXT);
      expect(JSON.stringify(item)).not.toContain('invalid_token');
    }
  });

  it('(c) a non-idempotent call hit by 401 after its watermark: UNCERTAIN tool.outcome_unknown, never retried; the run continues', async () => {
    const first = token();
    const server = await ScriptableHttpServer.start({ token: first });
    const scene = await suite.open({
      servers: [bearer('scripted', server.url, { sideEffect: 'external_write', risk: 'medium', idempotency: 'non_idempotent' })],
      brokerEnv: { SCRIPTED_TOKEN: first },
    });
    expect(scene.preparation.servers[0]?.status).toBe('connected');

    // Rotated on both sides: re-authentication WOULD succeed, so only the recovery rules stop the retry.
    const second = token();
    await server.control({ action: 'require_token', token: second });
    scene.brokerEnv.SCRIPTED_TOKEN = second;

    const ticket = await scene.run(createTicket, { title: 'printer on fire' });
    expectOutcome(ticket.item, 'uncertain', 'tool.outcome_unknown');
    expect(ticket.row.status).toBe('uncertain');
    expect(ticket.row.effectSentAt).not.toBeNull();
    // Not retried: the server saw the call exactly once.
    expect((await server.counts()).calls.create_ticket).toBe(1);
    expect((await server.journal()).filter((entry) => entry.tool === 'create_ticket').map((entry) => entry.status)).toEqual([401]);

    // The run continues.
    expectOutcome((await scene.run('math.evaluate', { expression: '9 - 2' })).item, 'succeeded', 'tool.ok');
    expect(JSON.stringify(ticket.item)).not.toContain(UNAUTHORIZED_BODY_TEXT);
  });
});
