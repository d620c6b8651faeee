import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpCatalogHistory } from '@veetbot/client';
import { errorOf, openApiHarness, type ApiHarness } from './harness';

// GET /v1/mcp/servers/{server_id}/catalog: a server's catalog generations and their diff, as the
// operator console shows them (docs/adr/0046), from the history the MCP adapter records.

let h: ApiHarness;
beforeAll(async () => {
  h = await openApiHarness({ worker: false });
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const schema = (properties: Record<string, unknown>) => ({ type: 'object', properties });
const tool = (name: string, inputSchema: Record<string, unknown>) => ({
  remoteName: name,
  registryName: `mcp.tickets.${name}`,
  inputSchema,
});

describe('MCP catalog history', () => {
  it('lists the generations oldest first, each with the tools added, removed and changed since the one before; another tenant sees none', async () => {
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    const record = (hash: string, at: number, tools: ReturnType<typeof tool>[]) =>
      h.system.stores.mcpCatalog.recordGeneration('tenant-a', {
        serverId: 'tickets',
        catalogHash: hash,
        discoveredAt: new Date(at),
        tools,
      });
    await record('a'.repeat(64), t0, [
      tool('read_item', schema({ id: { type: 'string' } })),
      tool('create_ticket', schema({ title: { type: 'string' } })),
    ]);
    await record('b'.repeat(64), t0 + 60_000, [
      tool('read_item', schema({ id: { type: 'string' }, verbose: { type: 'boolean' } })),
      tool('close_ticket', schema({ id: { type: 'string' } })),
    ]);

    const response = await h.call('GET', '/v1/mcp/servers/tickets/catalog');
    expect(response.status).toBe(200);
    const history = (await response.json()) as McpCatalogHistory;
    expect(history.server_id).toBe('tickets');
    expect(history.generations.map((g) => [g.catalog_hash, g.discovered_at])).toEqual([
      ['a'.repeat(64), '2026-01-01T00:00:00.000Z'],
      ['b'.repeat(64), '2026-01-01T00:01:00.000Z'],
    ]);
    expect(history.generations[0]!.diff).toEqual({
      added: ['mcp.tickets.create_ticket', 'mcp.tickets.read_item'],
      removed: [],
      changed: [],
    });
    expect(history.generations[1]!.diff).toEqual({
      added: ['mcp.tickets.close_ticket'],
      removed: ['mcp.tickets.create_ticket'],
      changed: ['mcp.tickets.read_item'],
    });
    expect(history.generations[1]!.tools.map((t) => t.registry_name)).toEqual(['mcp.tickets.close_ticket', 'mcp.tickets.read_item']);
    expect(history.generations[0]!.tools.every((t) => /^[0-9a-f]{64}$/.test(t.input_schema_sha256))).toBe(true);
    // The first generation's create_ticket was withdrawn when the second was discovered.
    expect(history.generations[0]!.tools.find((t) => t.remote_name === 'create_ticket')?.withdrawn_at).toBe('2026-01-01T00:01:00.000Z');

    expect(await errorOf(await h.call('GET', '/v1/mcp/servers/tickets/catalog', { key: h.b.key }))).toMatchObject({
      status: 404,
      code: 'not_found',
    });
    expect(await errorOf(await h.call('GET', '/v1/mcp/servers/nothing/catalog'))).toMatchObject({ status: 404, code: 'not_found' });
    expect((await h.call('GET', '/v1/mcp/servers/tickets/catalog', { key: null })).status).toBe(401);
  });
});
