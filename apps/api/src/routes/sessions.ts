import { DeferredToolIndex, OpenSessionRequest, Session } from '@veetbot/client';
import { deferredToolIndex } from '@veetbot/domain';
import { ApiError, notFound } from '../api-error';
import type { ApiDeps } from '../deps';
import { idParam } from '../params';
import type { RouteTable } from '../routing';
import { sessionWire } from '../wire';

/**
 * § Advertisement is pinned: a session resolves its tool set once — MCP discovery first when
 * MCP is composed — and answers the pin: the model-visible definitions and tool_schema_sha256.
 */
export function sessionRoutes(routes: RouteTable, deps: ApiDeps): void {
  routes.add(
    {
      method: 'post',
      path: '/v1/sessions',
      operationId: 'openSession',
      summary: 'Open a session: MCP discovery, then the pinned, model-visible tool definitions.',
      tag: 'sessions',
      body: OpenSessionRequest,
      responses: { 201: { description: 'The session and its pin.', schema: Session } },
    },
    async (c, { body, principal }) => {
      const tenantId = principal.tenant_id;
      const allowed = await mcpServersOf(deps, tenantId);
      if (body.mcp_servers !== undefined) {
        body.mcp_servers.forEach((id, i) => {
          if (!allowed.includes(id))
            throw new ApiError(
              400,
              'mcp.server_unknown',
              `Invalid request at body.mcp_servers.${i}: no enabled MCP server has this server_id.`,
            );
        });
      }
      const wanted = body.mcp_servers ?? allowed;
      const opened = await deps.runtime.openSessionWithReport(
        tenantId,
        principal,
        { agentId: body.agent_id, ...(body.enabled_tools === undefined ? {} : { enabledTools: body.enabled_tools }) },
        // The registry is shared by every tenant of this process: a session may pin MCP tools of
        // the operator's servers and of its own tenant's servers, never another tenant's.
        { flags: deps.environment.flags, targetKinds: deps.environment.targetKinds, mcpServers: wanted },
        {
          ...(body.mcp_servers === undefined ? {} : { mcpServerIds: body.mcp_servers }),
          ...(body.deferred_tools === undefined ? {} : { deferredTools: body.deferred_tools }),
        },
      );
      const wire = sessionWire(opened.session, opened.mcp?.servers ?? []);
      return c.json(body.enabled_tools === undefined ? wire : { ...wire, unknown_tools: [...opened.unknownTools] }, 201);
    },
  );

  routes.add(
    {
      method: 'get',
      path: '/v1/sessions/:session_id',
      operationId: 'getSession',
      summary: 'A session and its pinned tool definitions.',
      tag: 'sessions',
      responses: { 200: { description: 'The session.', schema: Session } },
    },
    async (c, { principal }) => {
      const session = await deps.stores.sessions.get(principal.tenant_id, idParam(c, 'session_id'));
      if (session === null) throw notFound();
      return c.json(sessionWire(session), 200);
    },
  );

  routes.add(
    {
      method: 'get',
      path: '/v1/sessions/:session_id/deferred-tools',
      operationId: 'getDeferredTools',
      summary: 'The deferred tool index: one line per pinned tool reached through tool.call.',
      tag: 'sessions',
      responses: { 200: { description: 'The deferred tool index.', schema: DeferredToolIndex } },
    },
    async (c, { principal }) => {
      const session = await deps.stores.sessions.get(principal.tenant_id, idParam(c, 'session_id'));
      if (session === null) throw notFound();
      // From the pinned specs: the entry describes what the session authorized, whatever the
      // registry holds now (§ Advertisement is pinned).
      return c.json({ tools: deferredToolIndex(session.deferredToolNames, session.specs) }, 200);
    },
  );

  routes.add(
    {
      method: 'post',
      path: '/v1/sessions/:session_id/close',
      operationId: 'closeSession',
      summary: 'Close a session and release its MCP transports (idempotent).',
      tag: 'sessions',
      responses: { 200: { description: 'The closed session.', schema: Session } },
    },
    async (c, { principal }) => {
      const tenantId = principal.tenant_id;
      const id = idParam(c, 'session_id');
      if ((await deps.stores.sessions.get(tenantId, id)) === null) throw notFound();
      const closed = await deps.stores.sessions.close(tenantId, id, deps.clock.now());
      // Transports are released promptly; the pin stays on the row.
      if (deps.mcp !== undefined)
        await deps.mcp.releaseSession(id).catch((error: unknown) => deps.logError?.(error, { method: 'POST', path: c.req.path }));
      return c.json(sessionWire(closed), 200);
    },
  );
}

/** The MCP servers a tenant's session may use: the operator's, and the tenant's own enabled ones. */
export async function mcpServersOf(deps: ApiDeps, tenantId: string): Promise<string[]> {
  const operator = deps.operatorServers.filter((s) => s.enabled).map((s) => s.serverId);
  const tenant = (await deps.stores.mcpServers.list(tenantId)).filter((s) => s.enabled).map((s) => s.serverId);
  return [...new Set([...operator, ...tenant])];
}
