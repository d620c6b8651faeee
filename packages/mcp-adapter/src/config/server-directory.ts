import type { CredentialOrigin } from '@veetbot/domain';
import type { McpServerStore } from '@veetbot/ports';
import { McpServerConfig } from './server-config';
import { serverConfigOfRow } from './server-row';

/**
 * A server as the adapter dials it: its configuration and who configured it (ADR 0017). The
 * origin decides which credential references the broker will resolve for it, so it is set by
 * the directory from where the configuration was read — never by a field a tenant can write.
 */
export type ConfiguredServer = McpServerConfig & { readonly origin: CredentialOrigin };

/** Where the adapter finds a tenant's servers. */
export interface McpServerDirectory {
  list(tenantId: string): Promise<ConfiguredServer[]>;
  /**
   * The operator's servers alone, the same for every tenant: what the start-up warm-up dials
   * (ADR-0131; docs/adr/0024). Absent: nothing is warmed.
   */
  operator?(): readonly ConfiguredServer[];
}

export function operatorServers(configs: readonly McpServerConfig[]): ConfiguredServer[] {
  return configs.map((config) => ({ ...config, origin: 'operator' }));
}

/**
 * The one directory the api and the worker compose (ADR 0011, 0017): the operator's servers for
 * every tenant, then the tenant's own enabled rows. A tenant row is HTTP only and never shadows
 * an operator server_id, whatever the database holds: a row written around the API (a stdio
 * command, an operator's server id) is not dialled.
 */
export function serverDirectory(options: {
  readonly operator: readonly McpServerConfig[];
  readonly tenantRows: Pick<McpServerStore, 'list'>;
}): McpServerDirectory {
  const operator = operatorServers(options.operator);
  const operatorIds = new Set(operator.map((s) => s.serverId));
  return {
    operator: () => operator,
    list: async (tenantId) => {
      const rows = await options.tenantRows.list(tenantId);
      const tenant = rows.flatMap((row): ConfiguredServer[] => {
        if (!row.enabled || row.transport !== 'http' || operatorIds.has(row.serverId)) return [];
        // A row that no longer parses is left out rather than failing every session of the tenant.
        const parsed = McpServerConfig.safeParse(serverConfigOfRow(row));
        return parsed.success ? [{ ...parsed.data, origin: 'tenant' }] : [];
      });
      return [...operator, ...tenant];
    },
  };
}
