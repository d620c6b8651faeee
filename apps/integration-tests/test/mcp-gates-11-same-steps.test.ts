import { describe, expect, it } from 'vitest';
import { mcpToolName } from '@veetbot/domain';
import { drivers } from '../src/test-database';
import { httpServer } from '../src/mcp-harness';
import { ScriptableHttpServer } from '../src/mcp-servers';
import { ALL_STEPS, expectOutcome, useMcpSuite } from './mcp-suite';

/**
 * Hard gate 11: "An MCP tool call traverses the same fourteen steps in the same order as a
 * builtin call, asserted by comparing the recorded step sequence for an MCP call against the
 * sequence for a builtin call rather than by asserting the steps individually."
 * The MCP gateway face (docs/adr/0044) is held to the same gate in mcp-gates-11-gateway.test.ts:
 * a call through /mcp records the steps the same call records through the steps route.
 */
describe.each(drivers())('Hard gate 11 — an MCP call takes the builtin path (%s)', (driver) => {
  const suite = useMcpSuite(driver);

  it('records the same step sequence for an MCP call as for a builtin call', async () => {
    const server = await ScriptableHttpServer.start();
    const scene = await suite.open({ servers: [httpServer('scripted', server.url)] });
    expect(scene.preparation.servers.map((s) => [s.serverId, s.status])).toEqual([['scripted', 'connected']]);
    const readItem = mcpToolName('scripted', 'read_item');
    expect(scene.pinned.toolNames).toContain(readItem);

    scene.steps.length = 0;
    const mcp = await scene.run(readItem, { id: 'a1' });
    const mcpSteps = [...scene.steps];

    scene.steps.length = 0;
    const builtin = await scene.run('math.evaluate', { expression: '2 * (3 + 4)' });
    const builtinSteps = [...scene.steps];

    // The comparison the gate names: the two sequences, whole.
    expect(mcpSteps).toEqual(builtinSteps);
    // And the sequence compared is the full pipeline, not two equally short ones.
    expect(mcpSteps).toEqual(ALL_STEPS);

    expectOutcome(mcp.item, 'succeeded', 'tool.ok');
    expectOutcome(builtin.item, 'succeeded', 'tool.ok');
    // The MCP call really went to the server process, once, and was recorded as an MCP call.
    expect((await server.counts()).calls.read_item).toBe(1);
    expect({ source: mcp.row.toolSource, server: mcp.row.serverId, status: mcp.row.status }).toEqual({
      source: 'mcp',
      server: 'scripted',
      status: 'succeeded',
    });
    expect(mcp.item.content.some((part) => part.type === 'text' && part.text.includes('item a1'))).toBe(true);
    expect({ source: builtin.row.toolSource, server: builtin.row.serverId }).toEqual({ source: 'builtin', server: null });
  });
});
