import { describe, expect, it } from 'vitest';
import { mcpToolName } from '@veetbot/domain';
import { drivers } from '../src/test-database';
import { httpServer } from '../src/mcp-harness';
import { ScriptableHttpServer, waitFor } from '../src/mcp-servers';
import { expectOutcome, useMcpSuite } from './mcp-suite';

/**
 * docs/adr/0052: an operator server's `tools` allow-list, against the scripted server (a real
 * process). A tool the list does not name is never registered, offered or called; the catalog
 * hash covers the listed tools only, so a server adding or changing a tool nobody may call
 * changes nothing — not the pin's version at the next session, not a mcp.catalog.changed event.
 */
const name = (remote: string) => mcpToolName('scripted', remote);

describe.each(drivers())('the operator tools allow-list (%s)', (driver) => {
  const suite = useMcpSuite(driver);

  it('only the listed tools are offered and callable; unlisted changes leave the catalog hash alone', async () => {
    const server = await ScriptableHttpServer.start();
    const config = httpServer('scripted', server.url, { tools: ['read_item', 'create_ticket'] });
    const first = await suite.open({ servers: [config] });
    const hash = first.preparation.servers[0]!.catalogHash!;
    expect(first.pinned.toolNames.filter((n) => n.startsWith('mcp.scripted.')).sort()).toEqual([name('create_ticket'), name('read_item')]);
    expect(first.registry.list().map((s) => s.name)).not.toContain(name('slow'));
    expectOutcome((await first.run(name('read_item'), { id: '7' })).item, 'succeeded', 'tool.ok');
    const unlisted = await first.run(name('hostile_error'), {});
    expectOutcome(unlisted.item, 'denied', 'policy.matrix.unknown_tool');
    expect((await server.counts()).calls.hostile_error).toBeUndefined();

    // The server adds a tool nobody listed, and says so; then drops a listed one, and says so.
    await server.control({
      action: 'set_tools',
      add: [
        { name: 'added_later', description: 'Unlisted.', inputSchema: { type: 'object', properties: {}, additionalProperties: false } },
      ],
      notify: true,
    });
    const second = await suite.open({ servers: [config] });
    expect(second.preparation.servers[0]!.catalogHash).toBe(hash);
    expect(second.registry.list().map((s) => s.name)).not.toContain(name('added_later'));

    await server.control({ action: 'set_tools', remove: ['create_ticket'], notify: true });
    const changed = await waitFor(
      async () => {
        const events = await first.eventsOfType('mcp.catalog.changed');
        return events.length > 0 ? events : undefined;
      },
      15_000,
      'mcp.catalog.changed',
    );
    const third = await suite.open({ servers: [config] });
    const now = third.preparation.servers[0]!.catalogHash!;
    expect(now).not.toBe(hash);
    // Every change the first session recorded is the listed tools' change: old hash, new hash.
    for (const event of await first.eventsOfType('mcp.catalog.changed'))
      expect(event.payload).toMatchObject({ server: 'scripted', old_hash: hash, new_hash: now });
    expect(changed.length).toBeGreaterThan(0);
  });
});
