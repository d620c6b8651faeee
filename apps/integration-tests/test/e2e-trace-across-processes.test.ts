import { provisionTenantKey } from '@veetbot/composition';
import { createStores, openDatabase, type Database } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, startNode, startScene, until, type E2eScene } from '../src/e2e-processes';
import { ScriptableHttpServer, stopAllServers } from '../src/mcp-servers';
import { OtlpReceiver } from '../src/otlp-receiver';

/**
 * Issue 26, items 1 and 2 (docs/adr/0068, 0069): the split deployment (api and worker as two
 * processes, as e2e-split-deployment starts them) with tracing turned on by the standard
 * OpenTelemetry environment only, exporting to a real OTLP/HTTP receiver this test runs. One
 * step submitted over HTTP is one trace: the api's request span, the worker's step.run,
 * tool.execute and mcp.request, and the scripted MCP server received that trace's traceparent
 * (header and params._meta) with the mcp.request span as its parent. A caller's own
 * traceparent is only a link. The processes' logs are JSON lines; the worker's line for the
 * step carries the call's trace id, tenant, run and step.
 */
let scene: E2eScene;
let server: ScriptableHttpServer;
let receiver: OtlpReceiver;
let database: Database;

/** A tenant's own trace context: it must never become the operator's trace. */
const CALLER_TRACE_ID = 'abcdefabcdefabcdefabcdefabcdef01';
const CALLER_TRACEPARENT = `00-${CALLER_TRACE_ID}-1111111111111111-01`;

beforeAll(async () => {
  receiver = await OtlpReceiver.start();
  server = await ScriptableHttpServer.start();
  const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' };
  scene = await startScene({
    workers: 1,
    apiEnv: tracing,
    workerEnv: tracing,
    operatorConfig: { mcp: { servers: [], tenant_egress: { allow_http: true, allow_private_addresses: true } } },
  });
  database = await openDatabase({ url: scene.url });
}, 180_000);

afterAll(async () => {
  await database?.close();
  await scene?.close();
  await stopAllServers();
  await receiver?.close();
});

describe('one trace per call across processes (issue 26)', () => {
  it('api, worker and MCP server share the trace id; the caller traceparent is only a link; logs are JSON with the trace id', async () => {
    const { key } = await provisionTenantKey(createStores(database), {
      tenantId: 'trace-a',
      tenantName: 'trace-a',
      principalId: 'trace-a-agent',
      scopes: ['mcp.*', 'mcp.servers.write'],
      now: new Date(),
    });
    const call = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(`${scene.baseUrl}${path}`, {
        method,
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      return { response, json: (await response.json()) as Record<string, unknown> };
    };
    const registered = await call('POST', '/v1/mcp/servers', {
      server_id: 'tickets',
      transport: 'http',
      endpoint: server.url,
      auth_scheme: 'none',
      side_effect: 'none',
      risk: 'low',
      idempotency: 'read_only',
    });
    expect(registered.response.status, JSON.stringify(registered.json)).toBe(201);
    const session = await call('POST', '/v1/sessions', { agent_id: 'trace-agent' });
    const run = await call('POST', '/v1/runs', { session_id: session.json.id, deadline_seconds: 600 });
    const runId = String(run.json.id);

    const step = await call(
      'POST',
      `/v1/runs/${runId}/steps`,
      {
        step_number: 1,
        wait_seconds: 30,
        calls: [{ call_id: 'c1', tool_name: 'mcp.tickets.read_item', arguments: { id: 't-1' }, context_trust: ['user'] }],
      },
      { traceparent: CALLER_TRACEPARENT, tracestate: 'tenant=chosen' },
    );
    expect(step.response.status, JSON.stringify(step.json)).toBe(200);
    expect((step.json.items as { outcome: { status: string } }[]).map((i) => i.outcome.status)).toEqual(['succeeded']);
    // Our trace, named to the caller (Trace Context Level 2): not the one it sent.
    const traceresponse = step.response.headers.get('traceresponse') ?? '';
    const traceId = /^00-([0-9a-f]{32})-[0-9a-f]{16}-0[01]$/.exec(traceresponse)?.[1];
    expect(traceId, traceresponse).toBeDefined();
    expect(traceId).not.toBe(CALLER_TRACE_ID);

    // The MCP server received the trace: header and params._meta, the same traceparent.
    const sent = (await server.journal()).filter((e) => e.tool === 'read_item');
    expect(sent).toHaveLength(1);
    const { header, meta } = sent[0]!.traceparent;
    expect(header).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(meta).toBe(header);

    // Every span of the call, from both processes, in the receiver under the one trace id.
    const spans = await until(
      async () => receiver.trace(traceId!),
      (list) =>
        ['step.run', 'tool.execute'].every((n) => list.some((s) => s.name === n && s.service === 'veetbot-worker')) &&
        list.some((s) => s.name === 'mcp.request' && s.attributes['mcp.method'] === 'tools/call') &&
        list.some((s) => s.service === 'veetbot-api'),
      30_000,
      'the worker spans of the call',
    );
    expect(receiver.contentTypes.every((t) => t.startsWith('application/json'))).toBe(true);
    const apiSpan = spans.find((s) => s.service === 'veetbot-api' && s.name === 'POST /v1/runs/:run_id/steps');
    expect(apiSpan, JSON.stringify(spans.map((s) => [s.service, s.name]))).toBeDefined();
    // The root is ours; the caller's context is a link only, and nothing landed in its trace.
    expect(apiSpan!.parentSpanId).toBe('');
    expect(apiSpan!.links).toEqual([{ traceId: CALLER_TRACE_ID, spanId: '1111111111111111' }]);
    expect(receiver.trace(CALLER_TRACE_ID)).toEqual([]);
    const byName = (name: string) => spans.find((s) => s.name === name && s.service === 'veetbot-worker')!;
    const toolExecutes = spans.filter((s) => s.name === 'tool.execute');
    expect(byName('step.run').parentSpanId).toBe(apiSpan!.spanId);
    expect(byName('step.run').attributes).toMatchObject({
      'veetbot.tenant_id': 'trace-a',
      'veetbot.run_id': runId,
      'veetbot.step_number': 1,
    });
    for (const span of toolExecutes) expect(span.parentSpanId).toBe(byName('step.run').spanId);
    const toolsCall = spans.find((s) => s.name === 'mcp.request' && s.attributes['mcp.method'] === 'tools/call');
    expect(
      toolExecutes.map((s) => s.spanId),
      JSON.stringify(spans),
    ).toContain(toolsCall?.parentSpanId);
    // The server's parent is the round trip's span.
    expect(header!.split('-')[2]).toBe(toolsCall!.spanId);

    // Logs: one JSON object a line, in both processes; the worker's step line names the call.
    for (const started of [scene.api, scene.workers[0]!]) {
      const lines = started
        .raw()
        .split('\n')
        .filter((l) => l.trim() !== '');
      expect(lines.length).toBeGreaterThan(3);
      for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    }
    const ran = await until(
      async () =>
        scene.workers[0]!.raw()
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .find((l) => l.msg === 'step ran' && l.run_id === runId),
      (line) => line !== undefined,
      10_000,
      'the worker log line of the step',
    );
    expect(ran).toMatchObject({ level: 'info', role: 'worker', trace_id: traceId, tenant_id: 'trace-a', step_number: 1, succeeded: 1 });
  }, 180_000);

  it('a secret in a start-up error never reaches the log: one JSON error line, the value redacted', async () => {
    // The database password also names the data folder, which cannot be created: the error's
    // own message quotes it, and the process's redactor must take it out.
    const password = 'Pw-9f3c2b7e-never-logged';
    const started = startNode(['--import', 'tsx', `${REPO}/apps/worker/src/main.ts`], {
      DATABASE_URL: `postgres://postgres:${password}@127.0.0.1:1/veetbot_nowhere`,
      // Under a regular file: ENOTDIR at once (mkdir -p under /proc spins in Node 20).
      VEETBOT_DATA_DIR: `/etc/hostname/veetbot-${password}/data`,
      VEETBOT_WORKER_PORT: '0',
    });
    expect((await started.exited).code, started.raw()).toBe(1);
    const lines = started
      .raw()
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.at(-1)).toMatchObject({ level: 'error', role: 'worker', code: 'startup.config_invalid' });
    expect(String(lines.at(-1)!.msg)).toMatch(
      /^error startup\.config_invalid: VEETBOT_DATA_DIR \/etc\/hostname\/veetbot-\[redacted credential\]\/data cannot be created/,
    );
    expect(started.raw()).not.toContain(password);
  }, 60_000);
});
