import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ApiError } from './api-error';
import { DEFAULT_API_SETTINGS, type ApiDeps, type ApiEnv } from './deps';
import { requestSpan } from './request-span';
import { toApiError } from './error-mapping';
import type { McpGateway } from '@veetbot/mcp-gateway';
import { mcpGatewayRoute, mcpRouteDocs } from './mcp/mcp-route';
import { openApiDocument } from './openapi';
import { RouteTable, type RouteDefinition } from './routing';
import { mountConsole } from './console/console-routes';
import { approvalRoutes } from './routes/approvals';
import { artifactRoutes } from './routes/artifacts';
import { eventRoutes } from './routes/events';
import { healthRoutes } from './routes/health';
import { invocationRoutes } from './routes/invocations';
import { mcpCatalogRoutes } from './routes/mcp-catalog';
import { mcpServerRoutes } from './routes/mcp-servers';
import { runRoutes } from './routes/runs';
import { questionRoutes } from './routes/questions';
import { mcpAuthorizationRoutes } from './routes/mcp-authorizations';
import { mcpOAuthCallbackRoutes } from './routes/mcp-oauth-callback';
import { secretRoutes } from './routes/secrets';
import { sessionRoutes } from './routes/sessions';
import { skillRoutes } from './routes/skills';
import { stepRoutes } from './routes/steps';

export interface ApiApp {
  readonly app: Hono<ApiEnv>;
  /** Every route's definition: what /v1/openapi.json is generated from. */
  readonly routes: readonly RouteDefinition[];
  /** The MCP gateway face mounted at /mcp (docs/adr/0044). */
  readonly gateway: McpGateway;
}

function errorResponse(error: ApiError): Response {
  return new Response(JSON.stringify({ error: { code: error.code, message: error.message } }), {
    status: error.status as ContentfulStatusCode,
    headers: { 'Content-Type': 'application/json; charset=utf-8', ...error.headers },
  });
}

/**
 * The tenants' HTTP API (ARCHITECTURE.md "apps/api"), built from injected dependencies.
 * Every error is `{ error: { code, message } }` with a stable code; bodies over the limit are
 * refused before they are read whole; unknown routes are the same `not_found` as unknown ids.
 */
export function buildApp(deps: ApiDeps): ApiApp {
  const settings = { ...DEFAULT_API_SETTINGS, ...deps.settings };
  const app = new Hono<ApiEnv>();

  // docs/adr/0068: first, so every request (a refused one too) is one span.
  app.use('*', requestSpan());
  app.use(
    '*',
    bodyLimit({
      maxSize: settings.bodyLimitBytes,
      onError: () => errorResponse(new ApiError(413, 'request.too_large', `The request body exceeds ${settings.bodyLimitBytes} bytes.`)),
    }),
  );

  const routes = new RouteTable(app, deps);
  healthRoutes(routes, deps);
  sessionRoutes(routes, deps);
  runRoutes(routes, deps);
  questionRoutes(routes, deps);
  stepRoutes(routes, deps);
  approvalRoutes(routes, deps);
  invocationRoutes(routes, deps);
  artifactRoutes(routes, deps);
  mcpServerRoutes(routes, deps);
  mcpCatalogRoutes(routes, deps);
  secretRoutes(routes, deps);
  mcpAuthorizationRoutes(routes, deps);
  mcpOAuthCallbackRoutes(routes, deps);
  skillRoutes(routes, deps);
  eventRoutes(routes, deps);

  let document: Record<string, unknown> | null = null;
  routes.add(
    {
      method: 'get',
      path: '/v1/openapi.json',
      operationId: 'openApi',
      summary: 'This document: generated from the zod schemas the routes validate with.',
      tag: 'operations',
      auth: false,
      responses: { 200: { description: 'OpenAPI 3.1.', raw: { contentType: 'application/json', schema: { type: 'object' } } } },
    },
    async (c) => {
      document ??= openApiDocument(routes.definitions);
      return c.json(document, 200);
    },
  );

  // Not a REST route (no OpenAPI entry): the MCP Streamable HTTP endpoint speaks JSON-RPC.
  const gateway = mcpGatewayRoute(app, deps, settings.mcp);
  for (const definition of mcpRouteDocs()) routes.document(definition);

  // The operator console: static files under /console (docs/adr/0046).
  mountConsole(app);

  app.notFound(() => errorResponse(new ApiError(404, 'not_found', 'No such resource.')));
  app.onError((error, c) => {
    const mapped = toApiError(error);
    if (mapped.internal) deps.logError?.(error, { method: c.req.method, path: c.req.path });
    return errorResponse(mapped.error);
  });
  return { app, routes: routes.definitions, gateway };
}
