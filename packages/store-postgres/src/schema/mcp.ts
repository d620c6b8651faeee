import { IdempotencyClass, RiskLevel, SideEffectClass } from '@veetbot/domain';
import type { McpAuthScheme, McpTransport } from '@veetbot/ports';
import { bigint, boolean, check, integer, jsonb, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core';
import { oneOf } from './checks';
import { MCP_AUTH_SCHEMES, MCP_TRANSPORTS } from '../vocabulary';
import { tenants, timestamptz } from './tenants';

/** § Schema additions: mcp_servers, exactly as listed. */
export const mcpServers = pgTable(
  'mcp_servers',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    serverId: text('server_id').notNull(),
    transport: text('transport').$type<McpTransport>().notNull(),
    endpoint: text('endpoint').notNull(),
    authScheme: text('auth_scheme').$type<McpAuthScheme>().notNull(),
    authName: text('auth_name'),
    credentialRef: text('credential_ref'),
    tokenEndpoint: text('token_endpoint'),
    tokenScopes: jsonb('token_scopes').$type<string[]>(),
    sideEffect: text('side_effect').$type<SideEffectClass>().notNull(),
    risk: text('risk').$type<RiskLevel>().notNull(),
    idempotency: text('idempotency').$type<IdempotencyClass>().notNull(),
    requiredScopes: jsonb('required_scopes').$type<string[]>().notNull(),
    timeoutSeconds: integer('timeout_seconds').notNull(),
    maximumOutputBytes: bigint('maximum_output_bytes', { mode: 'number' }).notNull(),
    enabled: boolean('enabled').notNull().default(true),
    createdAt: timestamptz('created_at').notNull(),
  },
  (t) => [
    unique('mcp_servers_tenant_id_server_id_unique').on(t.tenantId, t.serverId),
    check('mcp_servers_transport_check', oneOf(t.transport, MCP_TRANSPORTS)),
    check('mcp_servers_auth_scheme_check', oneOf(t.authScheme, MCP_AUTH_SCHEMES)),
    check('mcp_servers_side_effect_check', oneOf(t.sideEffect, SideEffectClass.options)),
    check('mcp_servers_risk_check', oneOf(t.risk, RiskLevel.options)),
    check('mcp_servers_idempotency_check', oneOf(t.idempotency, IdempotencyClass.options)),
  ],
);

/** § Schema additions: mcp_tool_catalog, a history (never updated in place but for withdrawn_at). */
export const mcpToolCatalog = pgTable(
  'mcp_tool_catalog',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    serverId: text('server_id').notNull(),
    catalogHash: text('catalog_hash').notNull(),
    remoteName: text('remote_name').notNull(),
    registryName: text('registry_name').notNull(),
    inputSchema: jsonb('input_schema').$type<Record<string, unknown>>().notNull(),
    discoveredAt: timestamptz('discovered_at').notNull(),
    withdrawnAt: timestamptz('withdrawn_at'),
  },
  (t) => [unique('mcp_tool_catalog_generation_unique').on(t.tenantId, t.serverId, t.catalogHash, t.remoteName)],
);
