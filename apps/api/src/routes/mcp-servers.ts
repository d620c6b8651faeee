import { CreateMcpServerRequest, McpServer, McpServerList, OperatorMcpServerList, UpdateMcpServerRequest } from '@veetbot/client';
import { parseCredentialRef, StoreError } from '@veetbot/domain';
import { serverConfigOfRow, validateServerConfig, type ConfigError, type McpServerConfig } from '@veetbot/mcp-adapter';
import { ApiError, notFound } from '../api-error';
import type { ApiDeps } from '../deps';
import type { RouteTable } from '../routing';
import { mcpServerWire, operatorServerWire } from '../wire';

const camel = (key: string) => key.replace(/_([a-z])/g, (_, ch: string) => ch.toUpperCase());

/** ADR 0017: who may add, change or disable the tenant's MCP servers. */
export const MCP_SERVERS_WRITE = 'mcp.servers.write';

/**
 * Tenant MCP servers: HTTP only, credentials only as the tenant's own `secret:NAME` (ADR 0017), "validated when it is written, not when it is dialled"
 * (§ Authentication, Gate 14) by the adapter's validateServerConfig with source 'tenant' — the
 * first error's stable `mcp.config.*` code is the answer's code. Operator (stdio) servers come
 * from the operator configuration file and are readable, never writable, here.
 */
export function mcpServerRoutes(routes: RouteTable, deps: ApiDeps): void {
  const validate = async (tenantId: string, input: Record<string, unknown>): Promise<McpServerConfig> => {
    const verdict = validateServerConfig(input, { source: 'tenant', egress: deps.egress });
    if (!verdict.ok) throw configError(verdict.errors);
    // ADR 0017: a tenant row's reference is secret:NAME (the validator saw to that), and the
    // tenant must hold NAME now — a row naming a secret it lacks is refused, not stored.
    const ref = parseCredentialRef(verdict.config.credentialRef);
    if (ref !== null && ref.kind === 'secret' && !(await deps.stores.tenantSecrets.has(tenantId, ref.name))) {
      throw new ApiError(
        400,
        'mcp.config.secret_not_found',
        `mcp.config.secret_not_found at body.credential_ref: this tenant holds no secret named ${ref.name} (PUT /v1/secrets/${ref.name} first).`,
      );
    }
    return verdict.config;
  };

  routes.add(
    {
      method: 'post',
      path: '/v1/mcp/servers',
      operationId: 'createMcpServer',
      summary: 'Add a tenant MCP server (HTTP), validated at write.',
      tag: 'mcp',
      scope: MCP_SERVERS_WRITE,
      body: CreateMcpServerRequest,
      responses: { 201: { description: 'The server.', schema: McpServer } },
    },
    async (c, { body, principal }) => {
      const config = await validate(principal.tenant_id, camelCase(body));
      if (deps.operatorServers.some((s) => s.serverId === config.serverId)) {
        throw new ApiError(409, 'mcp.server_id_taken', 'An operator server already uses this server_id.');
      }
      try {
        const row = await deps.stores.mcpServers.create(principal.tenant_id, { ...rowFields(config), createdAt: deps.clock.now() });
        return c.json(mcpServerWire(row), 201);
      } catch (error) {
        if (StoreError.isInstance(error) && error.code === 'store.unique_violation')
          throw new ApiError(409, 'mcp.server_id_taken', 'A server with this server_id exists.');
        throw error;
      }
    },
  );

  routes.add(
    {
      method: 'get',
      path: '/v1/mcp/servers',
      operationId: 'listMcpServers',
      summary: "The tenant's MCP servers.",
      tag: 'mcp',
      responses: { 200: { description: 'The servers.', schema: McpServerList } },
    },
    async (c, { principal }) => c.json({ servers: (await deps.stores.mcpServers.list(principal.tenant_id)).map(mcpServerWire) }, 200),
  );

  routes.add(
    {
      method: 'get',
      path: '/v1/mcp/servers/:server_id',
      operationId: 'getMcpServer',
      summary: 'One tenant MCP server.',
      tag: 'mcp',
      responses: { 200: { description: 'The server.', schema: McpServer } },
    },
    async (c, { principal }) => {
      const row = await deps.stores.mcpServers.get(principal.tenant_id, c.req.param('server_id') ?? '');
      if (row === null) throw notFound();
      return c.json(mcpServerWire(row), 200);
    },
  );

  routes.add(
    {
      method: 'patch',
      path: '/v1/mcp/servers/:server_id',
      operationId: 'updateMcpServer',
      summary: 'Change a tenant MCP server; the whole resulting configuration is validated again.',
      tag: 'mcp',
      scope: MCP_SERVERS_WRITE,
      body: UpdateMcpServerRequest,
      responses: { 200: { description: 'The server.', schema: McpServer } },
    },
    async (c, { body, principal }) => {
      const tenantId = principal.tenant_id;
      const current = await deps.stores.mcpServers.get(tenantId, c.req.param('server_id') ?? '');
      if (current === null) throw notFound();
      const patch = camelCase(body);
      const merged = await validate(tenantId, { ...serverConfigOfRow(current), ...patch });
      const row = await deps.apiStores.mcpServerAdmin.update(tenantId, current.serverId, { ...rowFields(merged), enabled: merged.enabled });
      return c.json(mcpServerWire(row), 200);
    },
  );

  routes.add(
    {
      method: 'post',
      path: '/v1/mcp/servers/:server_id/disable',
      operationId: 'disableMcpServer',
      summary: 'Disable a tenant MCP server: new sessions no longer prepare it (pinned sessions keep their pin).',
      tag: 'mcp',
      scope: MCP_SERVERS_WRITE,
      responses: { 200: { description: 'The server.', schema: McpServer } },
    },
    async (c, { principal }) => {
      const tenantId = principal.tenant_id;
      const current = await deps.stores.mcpServers.get(tenantId, c.req.param('server_id') ?? '');
      if (current === null) throw notFound();
      return c.json(mcpServerWire(await deps.stores.mcpServers.setEnabled(tenantId, current.serverId, false)), 200);
    },
  );

  routes.add(
    {
      method: 'get',
      path: '/v1/mcp/operator-servers',
      operationId: 'listOperatorMcpServers',
      summary: "The operator's servers (stdio), read-only; credential references are never shown.",
      tag: 'mcp',
      responses: { 200: { description: 'The servers.', schema: OperatorMcpServerList } },
    },
    async (c) => c.json({ servers: deps.operatorServers.map(operatorServerWire) }, 200),
  );
}

function camelCase(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) if (value !== undefined) out[camel(key)] = value;
  return out;
}

function rowFields(config: McpServerConfig) {
  return {
    serverId: config.serverId,
    transport: config.transport,
    endpoint: config.endpoint,
    authScheme: config.authScheme,
    authName: config.authName,
    credentialRef: config.credentialRef,
    tokenEndpoint: config.tokenEndpoint,
    tokenScopes: config.tokenScopes,
    sideEffect: config.sideEffect,
    risk: config.risk,
    idempotency: config.idempotency,
    requiredScopes: config.requiredScopes,
    timeoutSeconds: config.timeoutSeconds,
    maximumOutputBytes: config.maximumOutputBytes,
  };
}

/** The first error decides the code; the message names every error with its field. */
function configError(errors: readonly ConfigError[]): ApiError {
  const first = errors[0];
  const snake = (path: string) => path.replace(/[A-Z]/g, (ch) => `_${ch.toLowerCase()}`);
  const message = errors.map((e) => `${e.code} at body.${snake(e.path) || '(root)'}: ${e.message}`).join(' ');
  return new ApiError(400, first?.code ?? 'mcp.config.invalid', message);
}
