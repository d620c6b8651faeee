import { StoreError } from '@veetbot/domain';
import type { McpCatalogGeneration, NewEvent } from '@veetbot/ports';
import { describe, expect, it } from 'vitest';
import { type HarnessFactory, later, newScene, type Scene, type StoreHarness } from './harness';

const tool = (server: string, name: string) => ({
  remoteName: name,
  registryName: `mcp.${server}.${name}`,
  inputSchema: { type: 'object' },
});

const generation = (serverId: string, catalogHash: string, at: Date, names: readonly string[]): McpCatalogGeneration => ({
  serverId,
  catalogHash,
  discoveredAt: at,
  tools: names.map((name) => tool(serverId, name)),
});

/** An mcp.* event as the adapter writes it: the tenant's run-less stream. */
const mcpEvent = (scene: Scene, key: string, payload: Record<string, unknown>, type = 'mcp.server.connected'): NewEvent => ({
  runId: null,
  type,
  payload,
  derivationKey: `mcp:${scene.sessionId}:${key}`,
  createdAt: scene.t0,
});

async function catalogOf(h: StoreHarness, scene: Scene, serverId: string, hash: string): Promise<[string, number | null][]> {
  const rows = await h.stores.mcpCatalog.getGeneration(scene.tenantId, serverId, hash);
  return rows.map((r) => [r.remoteName, r.withdrawnAt?.getTime() ?? null]);
}

/**
 * ADR-0131: "One preparation writes its catalog generations and events in a single
 * transaction, so a failure commits none of them."
 */
export function mcpCatalogContract(get: HarnessFactory): void {
  describe('McpCatalogStore.recordPreparation', () => {
    it('writes two servers’ generations and the preparation’s events together', async () => {
      const h = get();
      const scene = await newScene(h);
      await h.stores.mcpCatalog.recordPreparation(
        scene.tenantId,
        [generation('alpha', 'ha1', scene.t0, ['a', 'b']), generation('beta', 'hb1', scene.t0, ['x'])],
        [mcpEvent(scene, 'alpha:connected:1', { server: 'alpha' }), mcpEvent(scene, 'beta:connected:1', { server: 'beta' })],
      );
      expect(await catalogOf(h, scene, 'alpha', 'ha1')).toEqual([
        ['a', null],
        ['b', null],
      ]);
      expect(await catalogOf(h, scene, 'beta', 'hb1')).toEqual([['x', null]]);
      const written = await h.stores.events.listAfter(scene.tenantId, null, 0, 100);
      expect(written.map((e) => [e.sequence, e.type, e.payload.server])).toEqual([
        [1, 'mcp.server.connected', 'alpha'],
        [2, 'mcp.server.connected', 'beta'],
      ]);

      // recordGeneration's semantics: a stored generation writes nothing again, a new one
      // withdraws the names it lacks; an event key already committed is not appended twice.
      const t2 = later(scene.t0, 60_000);
      await h.stores.mcpCatalog.recordPreparation(
        scene.tenantId,
        [generation('alpha', 'ha1', t2, ['a', 'b']), generation('beta', 'hb2', t2, ['y'])],
        [mcpEvent(scene, 'beta:connected:1', { server: 'beta' }), mcpEvent(scene, 'beta:connected:2', { server: 'beta' })],
      );
      expect(await catalogOf(h, scene, 'alpha', 'ha1')).toEqual([
        ['a', null],
        ['b', null],
      ]);
      expect((await h.stores.mcpCatalog.getGeneration(scene.tenantId, 'alpha', 'ha1')).map((r) => r.discoveredAt.getTime())).toEqual([
        scene.t0.getTime(),
        scene.t0.getTime(),
      ]);
      expect(await catalogOf(h, scene, 'beta', 'hb1')).toEqual([['x', t2.getTime()]]);
      expect(await catalogOf(h, scene, 'beta', 'hb2')).toEqual([['y', null]]);
      expect((await h.stores.events.listAfter(scene.tenantId, null, 0, 100)).map((e) => e.sequence)).toEqual([1, 2, 3]);
    });

    it('a preparation whose event is refused commits no catalog row, no withdrawal and no event', async () => {
      const h = get();
      const scene = await newScene(h);
      await h.stores.mcpCatalog.recordPreparation(
        scene.tenantId,
        [generation('alpha', 'ha1', scene.t0, ['a', 'b'])],
        [mcpEvent(scene, 'alpha:connected:1', { server: 'alpha' })],
      );

      // The generations are written first inside the transaction (alpha's new one withdraws
      // 'b'); the tool event carrying a field outside the allowed list is refused after them.
      const t2 = later(scene.t0, 60_000);
      const refused: NewEvent = {
        ...mcpEvent(scene, 'leak', { invocation_id: 'i', arguments: { secret: 1 } }, 'tool.call.started'),
        runId: scene.runId,
      };
      await expect(
        h.stores.mcpCatalog.recordPreparation(
          scene.tenantId,
          [generation('alpha', 'ha2', t2, ['a']), generation('beta', 'hb1', t2, ['x'])],
          [mcpEvent(scene, 'alpha:connected:2', { server: 'alpha' }), refused],
        ),
      ).rejects.toSatisfy((e: unknown) => StoreError.isInstance(e) && e.code === 'store.event_payload_refused');

      expect(await catalogOf(h, scene, 'alpha', 'ha1')).toEqual([
        ['a', null],
        ['b', null],
      ]);
      expect(await catalogOf(h, scene, 'alpha', 'ha2')).toEqual([]);
      expect(await h.stores.mcpCatalog.latest(scene.tenantId, 'beta')).toEqual([]);
      expect((await h.stores.events.listAfter(scene.tenantId, null, 0, 100)).map((e) => e.derivationKey)).toEqual([
        `mcp:${scene.sessionId}:alpha:connected:1`,
      ]);
      expect(await h.stores.events.listAfter(scene.tenantId, scene.runId, 0, 100)).toEqual([]);
    });

    it('a preparation the database refuses mid-way (an event payload jsonb cannot hold) commits nothing', async () => {
      const h = get();
      const scene = await newScene(h);
      // jsonb refuses the NUL character (SQLSTATE 22P05): the failure comes from the server,
      // after the generation rows and the first event's insert in the same transaction.
      await expect(
        h.stores.mcpCatalog.recordPreparation(
          scene.tenantId,
          [generation('alpha', 'ha1', scene.t0, ['a']), generation('beta', 'hb1', scene.t0, ['x'])],
          [mcpEvent(scene, 'alpha:connected:1', { server: 'alpha' }), mcpEvent(scene, 'beta:connected:1', { server: 'beta\u0000' })],
        ),
      ).rejects.toSatisfy((e: unknown) => StoreError.isInstance(e) && e.sqlstate === '22P05');
      expect(await h.stores.mcpCatalog.latest(scene.tenantId, 'alpha')).toEqual([]);
      expect(await h.stores.mcpCatalog.latest(scene.tenantId, 'beta')).toEqual([]);
      expect(await h.stores.events.listAfter(scene.tenantId, null, 0, 100)).toEqual([]);

      // Nothing half-done blocks the retry: the same preparation then commits whole, numbered from 1.
      await h.stores.mcpCatalog.recordPreparation(
        scene.tenantId,
        [generation('alpha', 'ha1', scene.t0, ['a']), generation('beta', 'hb1', scene.t0, ['x'])],
        [mcpEvent(scene, 'alpha:connected:1', { server: 'alpha' }), mcpEvent(scene, 'beta:connected:1', { server: 'beta' })],
      );
      expect((await h.stores.mcpCatalog.latest(scene.tenantId, 'beta')).map((r) => r.remoteName)).toEqual(['x']);
      expect((await h.stores.events.listAfter(scene.tenantId, null, 0, 100)).map((e) => e.sequence)).toEqual([1, 2]);
    });
  });
}
