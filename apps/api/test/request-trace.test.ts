import { startTelemetry, type Telemetry } from '@veetbot/telemetry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiHarness, sessionAndRun, type ApiHarness } from './harness';

/**
 * docs/adr/0068, in process (PGlite; the split deployment with an OTLP receiver is
 * apps/integration-tests/test/e2e-trace-across-processes.test.ts): the request span is the root
 * of the call's trace, its context is stored with the step, and the worker loop's step.run and
 * the pipeline's spans continue it; a caller's traceparent is only a link.
 */
interface EndedSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly links: readonly { traceId: string; spanId: string }[];
  readonly attributes: Record<string, unknown>;
}

type Processor = NonNullable<Parameters<typeof startTelemetry>[0]['spanProcessors']>[number];
const spans: EndedSpan[] = [];
let telemetry: Telemetry;
let h: ApiHarness;

const CALLER_TRACE_ID = '11112222333344445555666677778888';

beforeAll(async () => {
  const collector = {
    onStart: () => undefined,
    onEnd: (span: {
      name: string;
      spanContext(): { traceId: string; spanId: string };
      parentSpanContext?: { spanId: string };
      links: readonly { context: { traceId: string; spanId: string } }[];
      attributes: Record<string, unknown>;
    }) => {
      spans.push({
        name: span.name,
        ...span.spanContext(),
        parentSpanId: span.parentSpanContext?.spanId,
        links: span.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId })),
        attributes: span.attributes,
      });
    },
    forceFlush: async () => undefined,
    shutdown: async () => undefined,
  } as unknown as Processor;
  telemetry = await startTelemetry({ serviceName: 'veetbot-request-trace-test', spanProcessors: [collector], env: {} });
  h = await openApiHarness();
}, 60_000);

afterAll(async () => {
  await h?.close();
  await telemetry?.shutdown();
});

describe('the api request as the root of the call trace', () => {
  it('stores its context with the step; the worker step.run and tool.execute continue it; the caller traceparent is a link', async () => {
    const { runId } = await sessionAndRun(h);
    const response = await h.call('POST', `/v1/runs/${runId}/steps`, {
      body: {
        step_number: 1,
        calls: [{ call_id: 'c1', tool_name: 'math.evaluate', arguments: { expression: '2*(3+4)' }, context_trust: ['user'] }],
      },
      headers: { traceparent: `00-${CALLER_TRACE_ID}-aaaabbbbccccdddd-01`, tracestate: 'caller=1', baggage: 'tenant=evil' },
    });
    expect(response.status, await response.clone().text()).toBe(200);
    const traceId = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(response.headers.get('traceresponse') ?? '')?.[1];
    expect(traceId).toBeDefined();
    expect(traceId).not.toBe(CALLER_TRACE_ID);

    const request = spans.find((s) => s.name === 'POST /v1/runs/:run_id/steps' && s.traceId === traceId)!;
    expect(request.parentSpanId).toBeUndefined();
    expect(request.links).toEqual([{ traceId: CALLER_TRACE_ID, spanId: 'aaaabbbbccccdddd' }]);
    expect(request.attributes).toMatchObject({ 'http.route': '/v1/runs/:run_id/steps', 'http.response.status_code': 200 });

    // Stored with the step: the request span's own context, nothing of the caller's.
    const step = await h.system.stores.steps.get(h.a.tenantId, runId, 1);
    expect((step!.batch as { trace_context?: unknown }).trace_context).toEqual({ traceparent: `00-${traceId}-${request.spanId}-01` });

    const stepRun = spans.find((s) => s.name === 'step.run' && s.traceId === traceId);
    expect(stepRun?.parentSpanId).toBe(request.spanId);
    expect(stepRun?.attributes).toMatchObject({ 'veetbot.tenant_id': h.a.tenantId, 'veetbot.run_id': runId, 'veetbot.step_number': 1 });
    const execute = spans.find((s) => s.name === 'tool.execute' && s.traceId === traceId);
    expect(execute?.parentSpanId).toBe(stepRun!.spanId);
    expect(spans.some((s) => s.traceId === CALLER_TRACE_ID)).toBe(false);
  });

  it('an unknown path is named by its method only, and a request without traceparent has no link', async () => {
    const before = spans.length;
    const response = await h.call('GET', '/v1/no-such-thing/secret-looking-id');
    expect(response.status).toBe(404);
    const span = spans.slice(before).find((s) => s.attributes['http.response.status_code'] === 404);
    expect(span?.name).toBe('GET');
    expect(span?.links).toEqual([]);
    expect(JSON.stringify(span)).not.toContain('secret-looking-id');
  });
});
