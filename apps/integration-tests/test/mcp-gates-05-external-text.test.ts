import { describe, expect, it } from 'vitest';
import { mcpToolName, REASON_CODES } from '@veetbot/domain';
import { drivers } from '../src/test-database';
import { httpServer, textParts, unwrapEnvelope } from '../src/mcp-harness';
import { ScriptableHttpServer } from '../src/mcp-servers';
import { HOSTILE_TEXT } from '../src/scripted-texts';
import { eventsMentioning, expectOutcome, useMcpSuite } from './mcp-suite';

/**
 * Hard gate 5 over MCP: "No external text appears in message for any failure path, asserted
 * with a fake MCP server that returns a hostile error string" — here a real server process.
 * And § Failure modes: a non-idempotent MCP call that fails after dispatch is UNCERTAIN unless
 * the server returns the content-free marker effect_status: "not_applied" exactly.
 */
describe.each(drivers())('Hard gate 5 over MCP, and the not_applied marker (%s)', (driver) => {
  const suite = useMcpSuite(driver);
  const name = (remote: string) => mcpToolName('scripted', remote);

  it('a hostile error string never reaches outcome.message; it is only data, in an external_untrusted part', async () => {
    const server = await ScriptableHttpServer.start();
    const scene = await suite.open({ servers: [httpServer('scripted', server.url)] });

    const hostile = await scene.run(name('hostile_error'), {});
    // An ordinary upstream failure on a read-only server; message is the checked-in table's.
    expectOutcome(hostile.item, 'failed', 'tool.upstream_error');
    expect(hostile.item.outcome.message).toBe(REASON_CODES['tool.upstream_error'].message);
    expect(JSON.stringify(hostile.item.outcome)).not.toContain('IGNORE PREVIOUS INSTRUCTIONS');

    // The text is there as data: every part that carries it is labelled external_untrusted ...
    const carrying = textParts(hostile.item).filter((part) => part.text.includes(HOSTILE_TEXT));
    expect(carrying.length).toBeGreaterThanOrEqual(1);
    expect(carrying.every((part) => part.trust === 'external_untrusted')).toBe(true);
    // ... and enveloped: framed as an attributed untrusted span, never rewritten.
    for (const part of carrying) {
      const framed = unwrapEnvelope(part.text);
      expect({ source: framed?.source, trust: framed?.trust }).toEqual({
        source: 'mcp.scripted.hostile_error',
        trust: 'external_untrusted',
      });
      expect(framed?.span).toContain(HOSTILE_TEXT);
    }

    // Nowhere else: not in the events the operator's stream exports.
    expect(eventsMentioning(await scene.events(), HOSTILE_TEXT)).toEqual([]);
    // And the run continues.
    expectOutcome((await scene.run('math.evaluate', { expression: '5 * 5' })).item, 'succeeded', 'tool.ok');
  });

  it('on a non-idempotent server: effect_status not_applied is FAILED tool.upstream_error, a plain error is UNCERTAIN', async () => {
    const server = await ScriptableHttpServer.start();
    const scene = await suite.open({
      servers: [httpServer('scripted', server.url, { sideEffect: 'external_write', risk: 'medium', idempotency: 'non_idempotent' })],
    });

    const notApplied = await scene.run(name('not_applied_error'), {});
    expectOutcome(notApplied.item, 'failed', 'tool.upstream_error');
    expect(notApplied.row.status).toBe('failed');
    expect(notApplied.row.effectSentAt).not.toBeNull();

    const plain = await scene.run(name('plain_error'), {});
    expectOutcome(plain.item, 'uncertain', 'tool.outcome_unknown');
    expect(plain.row.status).toBe('uncertain');

    // The hostile one on this server is uncertain too, and its text is still only data.
    const hostile = await scene.run(name('hostile_error'), {});
    expectOutcome(hostile.item, 'uncertain', 'tool.outcome_unknown');
    expect(JSON.stringify(hostile.item.outcome)).not.toContain('IGNORE PREVIOUS INSTRUCTIONS');
    const parts = textParts(hostile.item).filter((part) => part.text.includes(HOSTILE_TEXT));
    expect(parts.length).toBeGreaterThanOrEqual(1);
    expect(parts.every((part) => part.trust === 'external_untrusted' && unwrapEnvelope(part.text)?.trust === 'external_untrusted')).toBe(
      true,
    );

    // Each was dispatched exactly once: an uncertain call is never retried.
    const { calls } = await server.counts();
    expect([calls.not_applied_error, calls.plain_error, calls.hostile_error]).toEqual([1, 1, 1]);
  });
});
