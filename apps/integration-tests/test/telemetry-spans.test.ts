import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { trace, type AttributeValue } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type Span, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { executeToolCall, type PipelineResult, type RunContext, type ToolCallRequest } from '@veetbot/executor';
import { PrometheusToolMetrics, startTelemetry, type Telemetry } from '@veetbot/telemetry';
import { concludedOf, drivers, SimulatedCrash, type PipelineHarness } from '../src';
import { usePipelineHarness } from './pipeline-suite';

/**
 * § Spans and metrics, composed as the worker composes them: the durable pipeline over a real
 * database, the executor's spans through the real OpenTelemetry SDK (an in-memory exporter in
 * place of OTLP), its metrics through the real prom-client registry.
 */

/** The attributes of tool.execute, exactly (§ Spans and metrics). */
const TOOL_EXECUTE_ATTRIBUTES = [
  'tool.idempotency_class',
  'tool.name',
  'tool.outcome_status',
  'tool.parallel_group',
  'tool.reason_code',
  'tool.source',
  'tool.truncated',
  'tool.version',
].sort();

/**
 * Span starts and ends in the order they happened. (Timestamps cannot tell: the SDK anchors each
 * span's clock to Date.now() at its start, so times of different spans differ by up to 1 ms.)
 */
class LifecycleLog implements SpanProcessor {
  readonly entries: string[] = [];
  onStart(span: Span): void {
    this.entries.push(`start ${span.name}`);
  }
  onEnd(span: ReadableSpan): void {
    this.entries.push(`end ${span.name}`);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const exporter = new InMemorySpanExporter();
const processor = new SimpleSpanProcessor(exporter);
const lifecycle = new LifecycleLog();
let telemetry: Telemetry;

beforeAll(async () => {
  telemetry = await startTelemetry({ serviceName: 'veetbot-integration', spanProcessors: [processor, lifecycle], env: {} });
});
afterAll(async () => {
  await telemetry.shutdown();
});
beforeEach(() => {
  exporter.reset();
  lifecycle.entries.length = 0;
});

/** Exported spans, once the processor has flushed (the host detector's attributes are asynchronous). */
async function finishedSpans(): Promise<ReadableSpan[]> {
  await processor.forceFlush();
  return exporter.getFinishedSpans();
}

function only(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
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

/** Every string an attribute or event of a span holds, flattened. */
function attributeStrings(spans: readonly ReadableSpan[]): string[] {
  const flatten = (v: AttributeValue | undefined): string[] =>
    v === undefined ? [] : Array.isArray(v) ? v.flatMap((x) => (x == null ? [] : [String(x)])) : [String(v)];
  return spans.flatMap((s) => [
    ...Object.values(s.attributes).flatMap(flatten),
    ...s.events.flatMap((e) => [e.name, ...Object.values(e.attributes ?? {}).flatMap(flatten)]),
    s.status.message ?? '',
  ]);
}

function execute(
  h: PipelineHarness,
  metrics: PrometheusToolMetrics | undefined,
  request: ToolCallRequest,
  run: Partial<RunContext> = {},
): Promise<PipelineResult> {
  const deps = metrics === undefined ? h.worker.deps : { ...h.worker.deps, metrics };
  return executeToolCall(deps, h.session, request, { dryRun: false, run: { ...h.worker.run, ...run } });
}

interface Sample {
  readonly labels: Record<string, string | number>;
  readonly value: number;
  readonly metricName?: string;
}

async function samplesOf(metrics: PrometheusToolMetrics, name: string): Promise<Sample[]> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  if (metric === undefined) throw new Error(`no metric ${name}`);
  return metric.values as Sample[];
}

async function counter(metrics: PrometheusToolMetrics, name: string, labels: Record<string, string>): Promise<number> {
  const key = JSON.stringify(Object.entries(labels).sort());
  const found = (await samplesOf(metrics, name)).filter((s) => JSON.stringify(Object.entries(s.labels).sort()) === key);
  return found.reduce((sum, s) => sum + s.value, 0);
}

async function histogramCount(metrics: PrometheusToolMetrics, name: string, labels: Record<string, string>): Promise<number> {
  const sample = (await samplesOf(metrics, name)).find(
    (s) =>
      s.metricName === `${name}_count` &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v) &&
      Object.keys(s.labels).length === Object.keys(labels).length,
  );
  return sample?.value ?? 0;
}

describe.each(drivers())('telemetry over the durable pipeline (%s)', (driver) => {
  const scene = usePipelineHarness(driver);

  it('a durable call is one tool.execute with tool.validate and policy.evaluate beneath it, and the tool runs inside it', async () => {
    const h = scene();
    // Stands in for the MCP adapter: a span the tool's own code opens while step 10 runs.
    h.probe('demo.external_write').during = async () => {
      trace.getTracer('veetbot.mcp-adapter').startSpan('mcp.request').end();
    };
    const line = 'telemetry-sentinel-argument-5c1e9b';
    const request = h.call('demo.external_write', { line });
    const parallelGroup = globalThis.crypto.randomUUID();
    const result = concludedOf(await execute(h, undefined, request, { parallelGroup }));
    expect(result.invocationStatus).toBe('succeeded');

    const spans = await finishedSpans();
    const root = only(spans, 'tool.execute');
    const validate = only(spans, 'tool.validate');
    const policy = only(spans, 'policy.evaluate');
    const mcp = only(spans, 'mcp.request');
    for (const child of [validate, policy, mcp]) childOf(child, root);
    expect(root.parentSpanContext).toBeUndefined();
    expect(root.instrumentationScope.name).toBe('veetbot.executor');
    // In pipeline order, each closed before the next opens, all inside the call.
    expect(lifecycle.entries).toEqual([
      'start tool.execute',
      'start tool.validate',
      'end tool.validate',
      'start policy.evaluate',
      'end policy.evaluate',
      'start mcp.request',
      'end mcp.request',
      'end tool.execute',
    ]);
    expect(spans).toHaveLength(4);

    const spec = h.registry.get('demo.external_write').spec;
    expect(Object.keys(root.attributes).sort()).toEqual(TOOL_EXECUTE_ATTRIBUTES);
    expect(root.attributes).toEqual({
      'tool.name': 'demo.external_write',
      'tool.source': 'builtin',
      'tool.version': spec.version,
      'tool.idempotency_class': 'non_idempotent',
      'tool.outcome_status': 'succeeded',
      'tool.reason_code': 'tool.ok',
      'tool.truncated': false,
      'tool.parallel_group': parallelGroup,
    });
    expect(root.resource.attributes['service.name']).toBe('veetbot-integration');

    // Never arguments, never results: no value on any span equals or contains the argument,
    // nor any text of the result.
    const strings = attributeStrings(spans);
    expect(strings.filter((s) => s.includes(line))).toEqual([]);
    const resultTexts = result.item.content.flatMap((p) => (p.type === 'text' ? [p.text] : []));
    expect(resultTexts.length).toBeGreaterThan(0);
    for (const text of resultTexts) expect(strings.filter((s) => s.includes(text))).toEqual([]);
  });

  it('a call whose arguments fail validation ends inside tool.validate: no policy span, outcome on tool.execute', async () => {
    const h = scene();
    const bad = 'not-an-integer-sentinel-7f3a';
    const result = concludedOf(await execute(h, undefined, h.call('demo.slow_read', { delay_ms: bad })));
    expect(result.item.outcome.status).toBe('failed');

    const spans = await finishedSpans();
    const root = only(spans, 'tool.execute');
    childOf(only(spans, 'tool.validate'), root);
    expect(spans.map((s) => s.name).sort()).toEqual(['tool.execute', 'tool.validate']);
    expect(root.attributes).toMatchObject({
      'tool.name': 'demo.slow_read',
      'tool.outcome_status': 'failed',
      'tool.reason_code': result.item.outcome.reason_code,
    });
    expect(root.status).toMatchObject({ code: 2, message: result.item.outcome.reason_code });
    expect(attributeStrings(spans).filter((s) => s.includes(bad))).toEqual([]);
  });

  it('a pipeline that throws marks tool.execute as an error by name, never by message', async () => {
    const h = scene();
    h.crashAt = 9;
    const secret = 'crash-sentinel-argument-0d44';
    await expect(execute(h, undefined, h.call('demo.external_write', { line: secret }))).rejects.toBeInstanceOf(SimulatedCrash);
    const root = only(await finishedSpans(), 'tool.execute');
    expect(root.status).toEqual({ code: 2, message: 'SimulatedCrash' });
    expect(root.attributes['tool.outcome_status']).toBeUndefined();
  });

  it('metrics: once per concluded call, by name and source, never by tenant; dry runs and replays record nothing', async () => {
    const h = scene();
    const metrics = new PrometheusToolMetrics();

    const ok = h.call('math.evaluate', { expression: '6 * 7' });
    expect(concludedOf(await execute(h, metrics, ok)).invocationStatus).toBe('succeeded');
    const huge = concludedOf(await execute(h, metrics, h.call('demo.huge_output', { bytes: 20_000 })));
    expect(huge.item.truncated).toBe(true);
    const failure = concludedOf(await execute(h, metrics, h.call('demo.hostile_failure', { mode: 'failure' })));
    expect(failure.item.outcome.reason_code).toBe('tool.upstream_error');
    const unknown = concludedOf(await execute(h, metrics, h.call('demo.not_registered', {})));
    expect(unknown.invocationStatus).toBe('denied');
    // UNCERTAIN: a NON_IDEMPOTENT call that times out after its effect watermark.
    h.probe('demo.external_write').during = (context) =>
      new Promise<void>((resolve) =>
        context.cancellation.aborted ? resolve() : context.cancellation.addEventListener('abort', () => resolve(), { once: true }),
      );
    const uncertain = concludedOf(
      await execute(h, metrics, h.call('demo.external_write', { line: 'slow send' }), { callerTimeoutSeconds: 0.2 }),
    );
    expect(uncertain.invocationStatus).toBe('uncertain');
    h.probe('demo.external_write').during = null;

    // A resubmission returns the recorded outcome (§ Deduplication, rule 2): not a second call.
    const replay = concludedOf(await execute(h, metrics, ok));
    expect(replay.item).toEqual(concludedOf(await execute(h, undefined, ok)).item);
    // A dry run concludes nothing.
    const dry = await executeToolCall({ ...h.worker.deps, metrics }, h.session, h.call('math.evaluate', { expression: '1' }), {
      dryRun: true,
    });
    expect(dry.kind).toBe('authorized');

    const math = { name: 'math.evaluate', source: 'builtin' };
    const hugeTool = { name: 'demo.huge_output', source: 'builtin' };
    const hostile = { name: 'demo.hostile_failure', source: 'builtin' };
    const write = { name: 'demo.external_write', source: 'builtin' };
    const unresolved = { name: '(unresolved)', source: 'builtin' };

    expect(await counter(metrics, 'tool_calls_total', { ...math, outcome_status: 'succeeded' })).toBe(1);
    expect(await counter(metrics, 'tool_calls_total', { ...hugeTool, outcome_status: 'succeeded' })).toBe(1);
    expect(await counter(metrics, 'tool_calls_total', { ...hostile, outcome_status: 'failed' })).toBe(1);
    expect(await counter(metrics, 'tool_calls_total', { ...unresolved, outcome_status: 'denied' })).toBe(1);
    expect(await counter(metrics, 'tool_calls_total', { ...write, outcome_status: 'uncertain' })).toBe(1);
    expect((await samplesOf(metrics, 'tool_calls_total')).reduce((n, s) => n + s.value, 0)).toBe(5);

    expect(await counter(metrics, 'tool_failures_total', { ...hostile, reason_code: 'tool.upstream_error' })).toBe(1);
    expect(await counter(metrics, 'tool_failures_total', { ...write, reason_code: 'tool.outcome_unknown' })).toBe(1);
    expect((await samplesOf(metrics, 'tool_failures_total')).reduce((n, s) => n + s.value, 0)).toBe(2);
    expect(await counter(metrics, 'tool_uncertain_total', write)).toBe(1);
    expect(await counter(metrics, 'tool_truncations_total', hugeTool)).toBe(1);
    expect((await samplesOf(metrics, 'tool_truncations_total')).reduce((n, s) => n + s.value, 0)).toBe(1);

    // Duration and size are measured for the calls a tool ran; the unknown tool ran nothing.
    expect(await histogramCount(metrics, 'tool_duration_seconds', math)).toBe(1);
    expect(await histogramCount(metrics, 'tool_duration_seconds', write)).toBe(1);
    expect(await histogramCount(metrics, 'tool_duration_seconds', unresolved)).toBe(0);
    expect(await histogramCount(metrics, 'tool_output_bytes', hugeTool)).toBe(1);
    const hugeRow = (await h.stores.invocations.listForRun(h.tenantId, h.runId)).find((r) => r.toolName === 'demo.huge_output');
    const sum = (await samplesOf(metrics, 'tool_output_bytes')).find(
      (s) => s.metricName === 'tool_output_bytes_sum' && s.labels.name === 'demo.huge_output',
    );
    expect(sum?.value).toBe(hugeRow?.outputBytes);

    const text = await metrics.metricsText();
    expect(text).not.toContain(h.tenantId);
    expect(text).not.toMatch(/tenant/i);
    expect(text).not.toContain('demo.not_registered');
  });
});
