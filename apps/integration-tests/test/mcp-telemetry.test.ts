import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AttributeValue } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { mcpToolName } from '@veetbot/domain';
import { PrometheusToolMetrics, startTelemetry, type Telemetry } from '@veetbot/telemetry';
import { drivers } from '../src/test-database';
import { httpServer } from '../src/mcp-harness';
import { ScriptableHttpServer } from '../src/mcp-servers';
import { expectOutcome, useMcpSuite } from './mcp-suite';

/**
 * § Spans and metrics, the MCP rows, composed as a worker composes them: the MCP adapter and the
 * durable pipeline over a real database, one PrometheusToolMetrics handed to both, spans through
 * the real OpenTelemetry SDK (an in-memory exporter in place of OTLP), against the scripted
 * Streamable HTTP server running as a real process.
 *
 *   tool.execute            executor
 *   `-- mcp.request         the adapter: one JSON-RPC round trip (here tools/call)
 */

const exporter = new InMemorySpanExporter();
const processor = new SimpleSpanProcessor(exporter);
let telemetry: Telemetry;

beforeAll(async () => {
  telemetry = await startTelemetry({ serviceName: 'veetbot-integration', spanProcessors: [processor], env: {} });
});
afterAll(async () => {
  await telemetry.shutdown();
});
beforeEach(() => {
  exporter.reset();
});

async function finishedSpans(): Promise<ReadableSpan[]> {
  await processor.forceFlush();
  return exporter.getFinishedSpans();
}

function named(spans: readonly ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((s) => s.name === name);
}

function only(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = named(spans, name);
  expect(
    found.map((s) => s.name),
    `exactly one ${name}`,
  ).toEqual([name]);
  return found[0]!;
}

function childOf(child: ReadableSpan, parent: ReadableSpan): void {
  expect(child.parentSpanContext?.spanId, `${child.name} under ${parent.name}`).toBe(parent.spanContext().spanId);
  expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
}

/** Every string an attribute, event or status of the spans holds. */
function spanStrings(spans: readonly ReadableSpan[]): string[] {
  const flatten = (v: AttributeValue | undefined): string[] =>
    v === undefined ? [] : Array.isArray(v) ? v.flatMap((x) => (x == null ? [] : [String(x)])) : [String(v)];
  return spans.flatMap((s) => [
    ...Object.values(s.attributes).flatMap(flatten),
    ...s.events.flatMap((e) => [e.name, ...Object.values(e.attributes ?? {}).flatMap(flatten)]),
    s.status.message ?? '',
  ]);
}

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** The samples of the exposition text (what GET /metrics serves), labels parsed. */
function samples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    out.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return out;
}

function family(text: string, name: string): Sample[] {
  return samples(text).filter((s) => s.name === name);
}

/** A loopback port that was free a moment ago and has nothing listening on it now. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe.each(drivers())('MCP telemetry through the durable pipeline (%s)', (driver) => {
  const suite = useMcpSuite(driver);

  it('a tools/call is one mcp.request under tool.execute; both MCP metric families carry their labels after a call and a failed connect', async () => {
    const server = await ScriptableHttpServer.start();
    // A second configured server where nothing listens: its connect fails at session open.
    const goneUrl = `http://127.0.0.1:${await closedPort()}/mcp`;

    const metrics = new PrometheusToolMetrics({ operatorServers: ['scripted', 'gone'] });
    const scene = await suite.open({ servers: [httpServer('scripted', server.url), httpServer('gone', goneUrl)], metrics });
    expect(scene.preparation.servers.map((s) => [s.serverId, s.status, s.reasonCode])).toEqual([
      ['scripted', 'connected', null],
      ['gone', 'failed', 'tool.server_unreachable'],
    ]);

    // Session open: initialize and tools/list round trips, outside any call (no parent).
    const opening = await finishedSpans();
    const openingRequests = named(opening, 'mcp.request');
    expect(
      openingRequests.map((s) => [s.attributes['mcp.server'], s.attributes['mcp.method'], s.attributes['mcp.outcome']]).sort(),
    ).toEqual([
      ['gone', 'initialize', 'transport_error'],
      ['scripted', 'initialize', 'ok'],
      ['scripted', 'tools/list', 'ok'],
    ]);
    for (const span of openingRequests) expect(span.parentSpanContext).toBeUndefined();
    const failedInitialize = openingRequests.find((s) => s.attributes['mcp.server'] === 'gone')!;
    expect(failedInitialize.status).toEqual({ code: 2, message: 'transport_error' });
    exporter.reset();

    // The call, through all fourteen steps.
    const sentinel = 'mcp-telemetry-argument-sentinel-91d2';
    const { item } = await scene.run(mcpToolName('scripted', 'read_item'), { id: sentinel });
    expectOutcome(item, 'succeeded', 'tool.ok');
    const resultTexts = item.content.flatMap((p) => (p.type === 'text' ? [p.text] : []));
    expect(
      resultTexts.some((t) => t.includes(sentinel)),
      'the server echoed the argument into its result',
    ).toBe(true);

    const spans = await finishedSpans();
    const root = only(spans, 'tool.execute');
    const request = only(spans, 'mcp.request');
    childOf(request, root);
    expect(root.parentSpanContext).toBeUndefined();
    expect(root.attributes).toMatchObject({
      'tool.name': 'mcp.scripted.read_item',
      'tool.source': 'mcp',
      'tool.outcome_status': 'succeeded',
    });
    expect(request.instrumentationScope.name).toBe('veetbot.mcp-adapter');
    expect(request.attributes).toEqual({ 'mcp.server': 'scripted', 'mcp.method': 'tools/call', 'mcp.outcome': 'ok' });
    expect(request.status.code).toBe(0);
    // The round trip lies inside the call.
    const start = (s: ReadableSpan) => s.startTime[0] * 1e9 + s.startTime[1];
    const end = (s: ReadableSpan) => s.endTime[0] * 1e9 + s.endTime[1];
    expect(start(request)).toBeGreaterThanOrEqual(start(root) - 1e6);
    expect(end(request)).toBeLessThanOrEqual(end(root) + 1e6);
    // Never arguments, never results, on any span of the call.
    const strings = spanStrings(spans);
    expect(strings.filter((s) => s.includes(sentinel))).toEqual([]);
    for (const text of resultTexts) expect(strings.filter((s) => s.includes(text))).toEqual([]);

    const text = await metrics.metricsText();
    expect(text).toContain('# TYPE mcp_requests_total counter');
    expect(text).toContain('# TYPE mcp_connect_failures_total counter');
    const requests = family(text, 'mcp_requests_total');
    for (const s of requests) expect(Object.keys(s.labels).sort()).toEqual(['method', 'outcome', 'server']);
    expect(requests.map((s) => [s.labels.server, s.labels.method, s.labels.outcome, s.value]).sort()).toEqual([
      ['gone', 'initialize', 'transport_error', 1],
      ['scripted', 'initialize', 'ok', 1],
      ['scripted', 'tools/call', 'ok', 1],
      ['scripted', 'tools/list', 'ok', 1],
    ]);
    const failures = family(text, 'mcp_connect_failures_total');
    expect(failures.map((s) => ({ labels: s.labels, value: s.value }))).toEqual([
      { labels: { server: 'gone', reason_code: 'tool.server_unreachable' }, value: 1 },
    ]);
    // The executor's family for the same call, by the registry name and source mcp.
    expect(family(text, 'tool_calls_total').map((s) => [s.labels.name, s.labels.source, s.labels.outcome_status, s.value])).toEqual([
      ['mcp.scripted.read_item', 'mcp', 'succeeded', 1],
    ]);
    // No URL, tenant, argument or result anywhere in the exposition.
    for (const leak of [goneUrl, server.url, scene.tenantId, sentinel]) expect(text).not.toContain(leak);
  });

  it('a reconnection a call makes nests its initialize under tool.execute, and a failed one is counted as a connect failure', async () => {
    const server = await ScriptableHttpServer.start();
    const metrics = new PrometheusToolMetrics({ operatorServers: ['scripted'] });
    const scene = await suite.open({ servers: [httpServer('scripted', server.url)], metrics });
    const readItem = mcpToolName('scripted', 'read_item');

    // Run teardown released the transport: the next call reconnects (initialize, tools/list) before tools/call.
    await scene.adapter.releaseSession(scene.sessionId);
    exporter.reset();
    expectOutcome((await scene.run(readItem, { id: 'a1' })).item, 'succeeded', 'tool.ok');
    let spans = await finishedSpans();
    let root = only(spans, 'tool.execute');
    const requests = named(spans, 'mcp.request');
    expect(requests.map((s) => s.attributes['mcp.method'])).toEqual(['initialize', 'tools/list', 'tools/call']);
    for (const span of requests) childOf(span, root);

    // Released again, and the server is gone: the reconnection fails inside the call.
    await scene.adapter.releaseSession(scene.sessionId);
    await server.stop();
    exporter.reset();
    expectOutcome((await scene.run(readItem, { id: 'a2' })).item, 'unavailable', 'tool.server_unreachable');
    spans = await finishedSpans();
    root = only(spans, 'tool.execute');
    const failed = only(spans, 'mcp.request');
    childOf(failed, root);
    expect(failed.attributes).toEqual({ 'mcp.server': 'scripted', 'mcp.method': 'initialize', 'mcp.outcome': 'transport_error' });

    const text = await metrics.metricsText();
    expect(family(text, 'mcp_connect_failures_total').map((s) => [s.labels.server, s.labels.reason_code, s.value])).toEqual([
      ['scripted', 'tool.server_unreachable', 1],
    ]);
    expect(
      family(text, 'mcp_requests_total')
        .map((s) => [s.labels.method, s.labels.outcome, s.value])
        .sort(),
    ).toEqual([
      ['initialize', 'ok', 2],
      ['initialize', 'transport_error', 1],
      ['tools/call', 'ok', 1],
      ['tools/list', 'ok', 2],
    ]);
  });
});
