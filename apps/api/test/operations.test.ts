import { checkReadiness, openDatabase } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app';
import { DEMO_TENANT_ID, ensureDemoTenant, hashApiKey } from '@veetbot/composition';
import { openApiHarness, type ApiHarness } from './harness';

let h: ApiHarness;
beforeAll(async () => {
  h = await openApiHarness({ worker: false });
}, 120_000);
afterAll(async () => {
  await h?.close();
});

describe('probes and metrics', () => {
  it('/healthz is up; /readyz is 200 on a migrated database and 503 on one without migrations', async () => {
    expect(await (await h.call('GET', '/healthz', { key: null })).json()).toEqual({ status: 'ok' });
    const ready = await h.call('GET', '/readyz', { key: null });
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { status: string; database: { migrations_applied: number; migrations_expected: number } };
    expect(body.status).toBe('ready');
    expect(body.database.migrations_applied).toBe(body.database.migrations_expected);
    expect(body.database.migrations_expected).toBeGreaterThan(0);

    const bare = await openDatabase({ dataDir: 'memory://' });
    try {
      const unmigrated = buildApp({ ...h.system.deps, readiness: () => checkReadiness(bare) });
      const response = await unmigrated.app.request('http://api.test/readyz');
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ status: 'not_ready', database: { reachable: true, migrations_applied: 0 } });
    } finally {
      await bare.close();
    }
    // A PostgreSQL nobody listens for (port 1): the pool fails to connect.
    const nowhere = await openDatabase({ url: 'postgres://veetbot@127.0.0.1:1/veetbot' });
    try {
      const unreachable = buildApp({ ...h.system.deps, readiness: () => checkReadiness(nowhere) });
      const down = await unreachable.app.request('http://api.test/readyz');
      expect(down.status).toBe(503);
      expect(await down.json()).toMatchObject({ status: 'not_ready', database: { reachable: false } });
    } finally {
      await nowhere.close();
    }
  });

  it('/metrics is Prometheus text with the tool metrics, and an empty registry without metrics', async () => {
    const response = await h.call('GET', '/metrics', { key: null });
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await response.text();
    for (const name of [
      'tool_calls_total',
      'tool_failures_total',
      'tool_duration_seconds',
      'tool_output_bytes',
      'tool_truncations_total',
      'tool_uncertain_total',
      'mcp_requests_total',
      'mcp_connect_failures_total',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    const { metrics: _none, ...withoutMetrics } = h.system.deps;
    const bare = buildApp(withoutMetrics);
    const empty = await bare.app.request('http://api.test/metrics');
    expect(empty.status).toBe(200);
    expect(await empty.text()).toBe('');
  });
});

describe('the demo tenant (pnpm start)', () => {
  it('is created once with a generated key; later starts create no key; a fixed key is ensured, a revoked one refused', async () => {
    const stores = h.system.stores;
    const first = await ensureDemoTenant(stores, null, new Date());
    expect(first.kind).toBe('created');
    const key = first.kind === 'created' ? first.key : '';
    expect(key).toMatch(/^vbk_[A-Za-z0-9_-]{32}$/);
    expect(await ensureDemoTenant(stores, null, new Date())).toEqual({ kind: 'existing' });
    const session = await h.call('POST', '/v1/sessions', { key, body: { agent_id: 'demo' } });
    expect(session.status).toBe(201);

    const fixed = 'vbk_fixed_demo_key_for_scripts_01';
    expect(await ensureDemoTenant(stores, fixed, new Date())).toEqual({ kind: 'fixed', key: fixed, created: true });
    expect(await ensureDemoTenant(stores, fixed, new Date())).toEqual({ kind: 'fixed', key: fixed, created: false });
    const row = await stores.apiKeys.findByHash(hashApiKey(fixed));
    expect(row).toMatchObject({ tenantId: DEMO_TENANT_ID, principalId: 'demo-admin' });
    await stores.apiKeys.revoke(DEMO_TENANT_ID, row!.id, new Date());
    await expect(ensureDemoTenant(stores, fixed, new Date())).rejects.toMatchObject({ code: 'startup.config_invalid' });
  });
});

describe('MCP transports', () => {
  it('closing a session releases its MCP transports through the composed McpClientPort', async () => {
    const released: string[] = [];
    const mcp = {
      prepareSession: async () => {
        throw new Error('not used by close');
      },
      releaseSession: async (sessionId: string) => {
        released.push(sessionId);
      },
      shutdown: async () => undefined,
    };
    const app = buildApp({ ...h.system.deps, mcp }).app;
    const auth = { Authorization: `Bearer ${h.a.key}`, 'Content-Type': 'application/json' };
    const opened = (await (
      await app.request('http://api.test/v1/sessions', { method: 'POST', headers: auth, body: '{"agent_id":"a"}' })
    ).json()) as { id: string };
    expect(released).toEqual([]);
    expect((await app.request(`http://api.test/v1/sessions/${opened.id}/close`, { method: 'POST', headers: auth })).status).toBe(200);
    expect(released).toEqual([opened.id]);
    // Another tenant's close is a 404 and releases nothing.
    const other = await app.request(`http://api.test/v1/sessions/${opened.id}/close`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${h.b.key}` },
    });
    expect(other.status).toBe(404);
    expect(released).toEqual([opened.id]);
  });
});

describe('/v1/openapi.json', () => {
  it('documents every route the app serves, generated from the schemas the routes validate with', async () => {
    const document = (await (await h.call('GET', '/v1/openapi.json', { key: null })).json()) as {
      openapi: string;
      paths: Record<
        string,
        Record<
          string,
          {
            operationId: string;
            requestBody?: { content: { 'application/json': { schema: { additionalProperties?: boolean; required?: string[] } } } };
            responses: Record<string, unknown>;
          }
        >
      >;
    };
    expect(document.openapi).toBe('3.1.0');
    const served = new Set(
      h.api.app.routes
        .filter((r) => r.method !== 'ALL')
        .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`),
    );
    const documented = new Set(
      Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m} ${path}`)),
    );
    expect([...documented].sort()).toEqual([...served].sort());
    expect(served.size).toBeGreaterThanOrEqual(27);
    for (const route of [
      'post /v1/sessions',
      'get /v1/sessions/{session_id}',
      'post /v1/sessions/{session_id}/close',
      'post /v1/runs',
      'get /v1/runs/{run_id}',
      'post /v1/runs/{run_id}/cancel',
      'post /v1/runs/{run_id}/complete',
      'get /v1/runs/{run_id}/children',
      'get /v1/runs/{run_id}/working-state',
      'get /v1/runs/{run_id}/questions',
      'post /v1/questions/{question_id}/answer',
      'post /v1/runs/{run_id}/steps',
      'get /v1/runs/{run_id}/steps/{step_number}',
      'get /v1/approvals',
      'post /v1/approvals/{approval_id}/approve',
      'post /v1/approvals/{approval_id}/deny',
      'get /v1/invocations',
      'get /v1/invocations/{invocation_id}',
      'get /v1/review/uncertain',
      'post /v1/review/uncertain/{invocation_id}/resolve',
      'get /v1/artifacts/{artifact_id}',
      'post /v1/mcp/servers',
      'get /v1/mcp/servers',
      'patch /v1/mcp/servers/{server_id}',
      'post /v1/mcp/servers/{server_id}/disable',
      'get /v1/mcp/operator-servers',
      'put /v1/secrets/{name}',
      'get /v1/secrets',
      'delete /v1/secrets/{name}',
      'get /v1/events',
      'get /healthz',
      'get /readyz',
      'get /metrics',
      'get /v1/openapi.json',
    ]) {
      expect(documented.has(route), route).toBe(true);
    }
    // The request schema is the strict zod schema: unknown fields are refused in the document too.
    const open = document.paths['/v1/sessions']!.post!.requestBody!.content['application/json'].schema;
    expect(open.additionalProperties).toBe(false);
    expect(open.required).toEqual(['agent_id']);
    expect(document.paths['/v1/runs/{run_id}/steps']!.post!.responses).toHaveProperty('202');
    // ADR 0017: every configuration-changing route names the scope it needs.
    const scopeOf = (path: string, method: string) =>
      (document.paths[path]![method] as unknown as Record<string, unknown>)['x-required-scope'];
    expect(scopeOf('/v1/mcp/servers', 'post')).toBe('mcp.servers.write');
    expect(scopeOf('/v1/mcp/servers/{server_id}', 'patch')).toBe('mcp.servers.write');
    expect(scopeOf('/v1/mcp/servers/{server_id}/disable', 'post')).toBe('mcp.servers.write');
    expect(scopeOf('/v1/secrets/{name}', 'put')).toBe('secrets.write');
    expect(scopeOf('/v1/secrets/{name}', 'delete')).toBe('secrets.write');
    expect(scopeOf('/v1/secrets', 'get')).toBe('secrets.read');
    expect(JSON.stringify(document.paths['/v1/secrets/{name}']!.put!.responses)).not.toContain('"value"');
  });
});
