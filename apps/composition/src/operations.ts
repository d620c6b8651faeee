import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ComposedSystem } from './compose';
import { METRICS_UNAUTHORIZED, metricsAuthorized } from './metrics-token';

/**
 * A worker-only process's own port (VEETBOT_WORKER_PORT): `/healthz`, `/readyz` and `/metrics`,
 * with the same bodies as the api's (apps/api/src/routes/health.ts), no API key (they carry no
 * tenant data; metrics have no tenant label and no name a tenant chose, docs/adr/0055). With
 * VEETBOT_METRICS_TOKEN set, /metrics needs it as a bearer token. In the split deployment the tool calls run here, so
 * their metrics (`tool_calls_total`, `tool_uncertain_total`, the MCP counters) are read here.
 * `system` is null while the process starts: probes answer, /readyz says not ready.
 */
export function operationsListener(
  current: () => ComposedSystem | null,
  metricsToken: string | null = null,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void answer(current(), metricsToken, req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'internal', message: 'An internal error occurred.' } }));
    });
  };
}

async function answer(
  system: ComposedSystem | null,
  metricsToken: string | null,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  const json = (status: number, body: unknown) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return json(405, { error: { code: 'method_not_allowed', message: 'Only GET is served here.' } });
  if (path === '/healthz') return json(200, { status: 'ok' });
  if (path === '/readyz') {
    const report = system === null ? null : await system.readiness().catch(() => null);
    const ready = report?.ready ?? false;
    return json(ready ? 200 : 503, {
      status: ready ? 'ready' : 'not_ready',
      database: {
        reachable: report?.reachable ?? false,
        migrations_applied: report?.migrationsApplied ?? 0,
        migrations_expected: report?.migrationsExpected ?? 0,
      },
    });
  }
  if (path === '/metrics') {
    if (!metricsAuthorized(req.headers.authorization, metricsToken)) {
      res.writeHead(401, { 'Content-Type': 'application/json', 'WWW-Authenticate': 'Bearer' });
      res.end(JSON.stringify({ error: METRICS_UNAUTHORIZED }));
      return;
    }
    const text = system === null ? '' : await system.metrics.metricsText();
    res.writeHead(200, { 'Content-Type': system?.metrics.contentType ?? 'text/plain; version=0.0.4; charset=utf-8' });
    res.end(text);
    return;
  }
  return json(404, { error: { code: 'not_found', message: 'No such resource (the worker port serves /healthz, /readyz, /metrics).' } });
}
