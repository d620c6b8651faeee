import { describe, expect, it } from 'vitest';
import { mcpToolName } from '@veetbot/domain';
import { drivers } from '../src/test-database';
import { httpServer } from '../src/mcp-harness';
import { ScriptableHttpServer, waitFor } from '../src/mcp-servers';
import { expectOutcome, stringsIn, useMcpSuite } from './mcp-suite';

/**
 * § Advertisement is pinned: "An MCP server that sends notifications/tools/list_changed
 * mid-session has the notification recorded and not applied: mcp.catalog.changed is emitted
 * with the old and new catalog hashes, the pinned set is unchanged for the life of the session,
 * and newly-added tools become available at the next session open."
 */
describe.each(drivers())('list_changed mid-session is recorded, not applied (%s)', (driver) => {
  const suite = useMcpSuite(driver);

  it('emits mcp.catalog.changed with the old and new hashes and leaves the pin untouched', async () => {
    const server = await ScriptableHttpServer.start();
    const scene = await suite.open({ servers: [httpServer('scripted', server.url)] });
    const prepared = scene.preparation.servers[0]!;
    expect(prepared.status).toBe('connected');
    const oldHash = prepared.catalogHash!;
    expect(oldHash).toMatch(/\S/);
    const pinnedBefore = { hash: scene.pinned.toolSchemaSha256, names: [...scene.pinned.toolNames] };
    const added = mcpToolName('scripted', 'added_later');

    // The server adds a tool and says so.
    await server.control({
      action: 'set_tools',
      add: [
        {
          name: 'added_later',
          description: 'Arrived mid-session.',
          inputSchema: { type: 'object', properties: {}, additionalProperties: false },
        },
      ],
      notify: true,
    });
    const [changed] = await waitFor(
      async () => {
        const events = await scene.eventsOfType('mcp.catalog.changed');
        return events.length > 0 ? events : undefined;
      },
      15_000,
      'mcp.catalog.changed',
    );
    const values = stringsIn(changed!.payload);
    expect(values).toContain('scripted');
    expect(values).toContain(oldHash);
    const newHashes = [...new Set(values)].filter(
      (value) => value !== oldHash && value.length === oldHash.length && /^[A-Za-z0-9:_-]+$/.test(value),
    );
    expect(newHashes).toHaveLength(1);

    // Not applied: the session's pin is what it was, and the registry does not offer the new tool
    // to this or any session (it becomes available at the next session open).
    expect({ hash: scene.pinned.toolSchemaSha256, names: [...scene.pinned.toolNames] }).toEqual(pinnedBefore);
    expect(scene.pinned.toolNames).not.toContain(added);
    const again = scene.registry.specsForSession(scene.agent, scene.principal, scene.policy, scene.environment);
    expect(again.toolSchemaSha256).toBe(pinnedBefore.hash);
    expect(scene.registry.pinned(pinnedBefore.hash)?.toolNames).toEqual(pinnedBefore.names);

    // The pinned tools still work, and the new one is not offered in this session.
    expectOutcome((await scene.run(mcpToolName('scripted', 'read_item'), { id: 'still' })).item, 'succeeded', 'tool.ok');
    const offered = await scene.execute(scene.call(added, {}));
    expect(offered.kind === 'concluded' && offered.item.outcome.status).toBe('denied');
    expect((await server.counts()).calls.added_later).toBeUndefined();
  });
});
