import type { Principal } from '@veetbot/domain';
import type { Hono } from 'hono';
import { McpGateway, jsonRpcErrorResponse, type McpGatewaySettings } from '@veetbot/mcp-gateway';
import { ApiError } from '../api-error';
import { principalForAuthorization } from '../auth';
import type { ApiDeps, ApiEnv } from '../deps';
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
