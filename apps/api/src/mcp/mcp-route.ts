import type { Principal } from '@veetbot/domain';
import type { Hono } from 'hono';
import { McpGateway, jsonRpcErrorResponse, type McpGatewaySettings } from '@veetbot/mcp-gateway';
import { ApiError } from '../api-error';
import { principalForAuthorization } from '../auth';
import { z } from 'zod';
import type { ApiDeps, ApiEnv } from '../deps';
import type { RouteDefinition } from '../routing';
import { toApiError } from '../error-mapping';
import { ApiGatewayRuntime } from './gateway-runtime';

/** Where the gateway face is mounted. */
export const MCP_PATH = '/mcp';

/**
 * The MCP gateway face on the api (docs/adr/0044): Streamable HTTP at /mcp (POST, GET, DELETE).
 * In order: DNS-rebinding protection (Host and Origin allowlists, on by default), the api's own
 * key check (a missing, unknown or revoked key is HTTP 401 with a JSON-RPC error body and the
 * same WWW-Authenticate challenge), then the gateway with the key's principal.
 */
export function mcpGatewayRoute(app: Hono<ApiEnv>, deps: ApiDeps, settings: Partial<McpGatewaySettings>): McpGateway {
  const gateway = new McpGateway({
    runtime: new ApiGatewayRuntime(deps),
    settings,
    onError: (error) => deps.logError?.(error, { method: 'MCP', path: MCP_PATH }),
  });
  deps.shutdownSignal?.addEventListener('abort', () => void gateway.close(), { once: true });
  app.on(['POST', 'GET', 'DELETE'], MCP_PATH, async (c) => {
    const request = c.req.raw;
    const hostile = gateway.refuseHostile(request);
    if (hostile !== undefined) return hostile;
    let principal: Principal;
    try {
      principal = await principalForAuthorization(deps, c.req.header('authorization'));
    } catch (error) {
      const mapped = ApiError.isApiError(error) ? error : toApiError(error).error;
      return jsonRpcErrorResponse(mapped.status, mapped.status === 401 ? -32001 : -32603, mapped.code, mapped.message, mapped.headers);
    }
    return gateway.fetch(request, principal);
  });
  return gateway;
}

/** A JSON-RPC message (or batch) of the MCP Streamable HTTP transport: documented, parsed by the SDK. */
const JsonRpcBody = z.union([z.looseObject({ jsonrpc: z.literal('2.0') }), z.array(z.looseObject({ jsonrpc: z.literal('2.0') }))]);
const JSON_RPC_ANSWER = {
  contentType: 'application/json',
  schema: { type: 'object', description: 'A JSON-RPC response, or a text/event-stream of messages ending with it.' },
};

/** /mcp in /v1/openapi.json: what it is, not its JSON-RPC methods (the MCP specification's). */
export function mcpRouteDocs(): RouteDefinition[] {
  const about =
    "The MCP gateway face (Streamable HTTP; docs/adr/0044): a session's pinned tools for any MCP client. 2025 clients initialize (Mcp-Session-Id); 2026-07-28 clients name their run in Veetbot-Run-Id.";
  return [
    {
      method: 'post',
      path: MCP_PATH,
      operationId: 'mcpPost',
      summary: `${about} POST: a JSON-RPC message.`,
      tag: 'mcp',
      body: JsonRpcBody,
      responses: {
        200: { description: 'The JSON-RPC answer (JSON, or SSE when the server sends messages first).', raw: JSON_RPC_ANSWER },
        202: { description: 'A notification or response, accepted.' },
      },
    },
    {
      method: 'get',
      path: MCP_PATH,
      operationId: 'mcpGet',
      summary: `${about} GET: the 2025 session's server-to-client stream.`,
      tag: 'mcp',
      responses: { 200: { description: 'text/event-stream.', raw: { contentType: 'text/event-stream', schema: { type: 'string' } } } },
    },
    {
      method: 'delete',
      path: MCP_PATH,
      operationId: 'mcpDelete',
      summary: `${about} DELETE: end the 2025 session (and close the veetbot session it opened).`,
      tag: 'mcp',
      responses: { 200: { description: 'The MCP session ended.' } },
    },
  ];
}
