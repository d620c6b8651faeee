import { type McpAuthorization, McpAuthorizationList } from '@veetbot/client';
import { isValidServerId } from '@veetbot/domain';
import type { McpDelegatedGrantSummary } from '@veetbot/ports';
import { notFound } from '../api-error';
import type { ApiDeps } from '../deps';
import type { RouteTable } from '../routing';

const iso = (d: Date) => d.toISOString();
const authorizationWire = (g: McpDelegatedGrantSummary): McpAuthorization => ({
  server_id: g.serverId,
  issuer: g.issuer,
  expires_at: g.expiresAt === null ? null : iso(g.expiresAt),
  created_at: iso(g.createdAt),
  updated_at: iso(g.updatedAt),
});

/**
 * docs/adr/0080: the calling principal's delegated MCP grants (issue 28 item 4). A grant is the
 * principal's own consent, so these routes need the key only, no scope, and never reach another
 * principal's grant (the principal comes from the key, never from the request). Tokens are
 * never returned: the list is server, issuer and times.
 */
export function mcpAuthorizationRoutes(routes: RouteTable, deps: ApiDeps): void {
  routes.add(
    {
      method: 'get',
      path: '/v1/mcp/authorizations',
      operationId: 'listMcpAuthorizations',
      summary: 'The MCP servers the calling principal has granted (delegated authorization): server, issuer, times; never a token.',
      tag: 'mcp',
      responses: { 200: { description: 'The grants, by server id.', schema: McpAuthorizationList } },
    },
    async (c, { principal }) =>
      c.json(
        { authorizations: (await deps.stores.mcpDelegatedGrants.list(principal.tenant_id, principal.principal_id)).map(authorizationWire) },
        200,
      ),
  );

  routes.add(
    {
      method: 'delete',
      path: '/v1/mcp/authorizations/:server_id',
      operationId: 'revokeMcpAuthorization',
      summary:
        "Revoke the calling principal's grant to one MCP server: its sealed tokens are deleted, and the server's next call asks for consent again.",
      tag: 'mcp',
      responses: { 204: { description: 'Revoked.' } },
    },
    async (c, { principal }) => {
      const serverId = c.req.param('server_id') ?? '';
      // A server id outside the grammar cannot name a grant: the same 404 as a missing one.
      if (
        !isValidServerId(serverId) ||
        !(await deps.stores.mcpDelegatedGrants.delete(principal.tenant_id, principal.principal_id, serverId))
      )
        throw notFound();
      return c.body(null, 204);
    },
  );
}
