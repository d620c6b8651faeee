import { ErrorBody, Health, Readiness } from '@veetbot/client';
import { METRICS_UNAUTHORIZED, metricsAuthorized } from '@veetbot/composition';
import { ApiError } from '../api-error';
import type { ApiDeps } from '../deps';
import type { RouteTable } from '../routing';

/**
 * Probes and metrics: no API key (they carry no tenant data; metrics have no tenant label and no
 * name a tenant chose, docs/adr/0055). /metrics takes the operator's VEETBOT_METRICS_TOKEN as a
 * bearer token when one is configured.
 */
export function healthRoutes(routes: RouteTable, deps: ApiDeps): void {
  routes.add(
    {
      method: 'get',
      path: '/healthz',
      operationId: 'health',
      summary: 'The process is up.',
      tag: 'operations',
      auth: false,
      responses: { 200: { description: 'Up.', schema: Health } },
    },
    async (c) => c.json({ status: 'ok' as const }, 200),
  );

  routes.add(
    {
      method: 'get',
      path: '/readyz',
      operationId: 'ready',
      summary: 'Ready: the database is reachable and every migration is applied (else 503).',
      tag: 'operations',
      auth: false,
      responses: { 200: { description: 'Ready.', schema: Readiness }, 503: { description: 'Not ready.', schema: Readiness } },
    },
    async (c) => {
      const report = await deps.readiness().catch(() => ({ reachable: false, migrationsApplied: 0, migrationsExpected: 0, ready: false }));
      const body = {
        status: report.ready ? ('ready' as const) : ('not_ready' as const),
        database: {
          reachable: report.reachable,
          migrations_applied: report.migrationsApplied,
          migrations_expected: report.migrationsExpected,
        },
      };
      return c.json(body, report.ready ? 200 : 503);
    },
  );

  routes.add(
    {
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      summary:
        "Prometheus text exposition: the eight tool and MCP metrics (§ Spans and metrics); a tenant server's id and tools are `tenant_server`. With VEETBOT_METRICS_TOKEN set, needs `Authorization: Bearer <token>` (401 metrics.unauthorized).",
      tag: 'operations',
      auth: false,
      responses: {
        200: {
          description: 'Prometheus text format 0.0.4.',
          raw: { contentType: 'text/plain; version=0.0.4', schema: { type: 'string' } },
        },
        401: { description: 'metrics.unauthorized: VEETBOT_METRICS_TOKEN is set and the request did not present it.', schema: ErrorBody },
      },
    },
    async (c) => {
      if (!metricsAuthorized(c.req.header('authorization'), deps.metricsToken ?? null))
        throw new ApiError(401, METRICS_UNAUTHORIZED.code, METRICS_UNAUTHORIZED.message, { headers: { 'WWW-Authenticate': 'Bearer' } });
      const text = deps.metrics === undefined ? '' : await deps.metrics.metricsText();
      const contentType = deps.metrics?.contentType ?? 'text/plain; version=0.0.4; charset=utf-8';
      return new Response(text, { status: 200, headers: { 'Content-Type': contentType } });
    },
  );
}
