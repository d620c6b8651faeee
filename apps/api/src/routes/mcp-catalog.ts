import { McpCatalogHistory } from '@veetbot/client';
import { canonicalJson, sha256Hex } from '@veetbot/domain';
import type { McpCatalogRow } from '@veetbot/ports';
import { notFound } from '../api-error';
import type { ApiDeps } from '../deps';
import type { RouteTable } from '../routing';

/** The most catalog rows one answer reads (a server's whole history, bounded). */
const HISTORY_ROWS = 10_000;

/**
 * A server's catalog generations and what each changed (§ Schema additions: the catalog is a
 * history; docs/adr/0046: the console shows it). For any server whose catalog this tenant has
 * recorded — its own, or an operator server its sessions pinned; row-level security keeps it to
 * the tenant's rows.
 */
export function mcpCatalogRoutes(routes: RouteTable, deps: ApiDeps): void {
  routes.add(
    {
      method: 'get',
      path: '/v1/mcp/servers/:server_id/catalog',
      operationId: 'getMcpCatalogHistory',
      summary: "A server's catalog generations, oldest first, each with the tools added, removed and changed since the one before.",
      tag: 'mcp',
      responses: { 200: { description: 'The history.', schema: McpCatalogHistory } },
    },
    async (c, { principal }) => {
      const serverId = c.req.param('server_id') ?? '';
      const rows = await deps.apiStores.mcpCatalogHistory.history(principal.tenant_id, serverId, HISTORY_ROWS);
      if (rows.length === 0) throw notFound();
      return c.json({ server_id: serverId, generations: generationsOf(rows) } satisfies McpCatalogHistory, 200);
    },
  );
}

/** Rows grouped by catalog hash in discovery order, each generation diffed against the one before. */
export function generationsOf(rows: readonly McpCatalogRow[]): McpCatalogHistory['generations'] {
  const groups = new Map<string, McpCatalogRow[]>();
  for (const row of rows) {
    const group = groups.get(row.catalogHash);
    if (group === undefined) groups.set(row.catalogHash, [row]);
    else group.push(row);
  }
  const generations: McpCatalogHistory['generations'] = [];
  let before = new Map<string, string>();
  for (const [hash, group] of groups) {
    const tools = group
      .map((row) => ({
        registry_name: row.registryName,
        remote_name: row.remoteName,
        input_schema_sha256: sha256Hex(canonicalJson(row.inputSchema)),
        withdrawn_at: row.withdrawnAt === null ? null : row.withdrawnAt.toISOString(),
      }))
      .sort((a, b) => (a.registry_name < b.registry_name ? -1 : a.registry_name > b.registry_name ? 1 : 0));
    const now = new Map(tools.map((tool) => [tool.registry_name, tool.input_schema_sha256]));
    generations.push({
      catalog_hash: hash,
      discovered_at: group[0]!.discoveredAt.toISOString(),
      tools,
      diff: {
        added: [...now.keys()].filter((name) => !before.has(name)),
        removed: [...before.keys()].filter((name) => !now.has(name)).sort(),
        changed: [...now.keys()].filter((name) => before.has(name) && before.get(name) !== now.get(name)),
      },
    });
    before = now;
  }
  return generations;
}
