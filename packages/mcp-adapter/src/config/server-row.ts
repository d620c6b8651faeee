import type { McpServerRow } from '@veetbot/ports';
import type { McpServerConfig } from './server-config';

/**
 * A tenant's mcp_servers row as the adapter's configuration: the columns are its fields
 * (§ Schema additions). The one mapping the api (validation on update, composition) and the
 * worker (composition) share.
 */
export function serverConfigOfRow(row: McpServerRow): McpServerConfig {
  return {
    serverId: row.serverId,
    transport: row.transport,
    endpoint: row.endpoint,
    authScheme: row.authScheme,
    authName: row.authName,
    credentialRef: row.credentialRef,
    tokenEndpoint: row.tokenEndpoint,
    tokenScopes: row.tokenScopes,
    sideEffect: row.sideEffect,
    risk: row.risk,
    idempotency: row.idempotency,
    requiredScopes: row.requiredScopes,
    timeoutSeconds: row.timeoutSeconds,
    maximumOutputBytes: row.maximumOutputBytes,
    enabled: row.enabled,
  };
}
