import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { trace, type Span } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { otlpTracesUrl } from '../src/start-telemetry';
import { startTelemetry, type Telemetry } from '../src/index';

let running: Telemetry | null = null;
afterEach(async () => {
  await running?.shutdown();
  running = null;
});

/** A parent with two children, the second after an await: the context must survive it. */
async function nestedSpans(): Promise<void> {
  const tracer = trace.getTracer('test');
  await tracer.startActiveSpan('parent', async (parent: Span) => {
    tracer.startSpan('first').end();
    await new Promise((resolve) => setTimeout(resolve, 1));
    tracer.startSpan('second').end();
    parent.end();
  });
}

describe('startTelemetry', () => {
  it('registers a tracer provider whose spans reach the given processors, nested through awaits', async () => {
    const exporter = new InMemorySpanExporter();
    const processor = new SimpleSpanProcessor(exporter);
    running = await startTelemetry({ serviceName: 'veetbot-test', spanProcessors: [processor], env: {} });
    expect(running.otlpTracesUrl).toBeNull();
    await nestedSpans();
    // The host detector's attributes are asynchronous; the processor exports once they settle.
    await processor.forceFlush();

    const spans = exporter.getFinishedSpans();
    const parent = spans.find((s) => s.name === 'parent');
    expect(parent).toBeDefined();
    for (const name of ['first', 'second']) {
      const child = spans.find((s) => s.name === name);
      expect(child?.parentSpanContext?.spanId, name).toBe(parent?.spanContext().spanId);
      expect(child?.spanContext().traceId, name).toBe(parent?.spanContext().traceId);
    }
    expect(parent?.resource.attributes['service.name']).toBe('veetbot-test');
  });

  it('unregisters on shutdown, so spans stop recording and a second start works', async () => {
    const first = new InMemorySpanExporter();
    running = await startTelemetry({ serviceName: 'one', spanProcessors: [new SimpleSpanProcessor(first)], env: {} });
    await running.shutdown();
    const after = trace.getTracer('test').startSpan('after shutdown');
    expect(after.isRecording()).toBe(false);
    after.end();

    const second = new InMemorySpanExporter();
    const processor = new SimpleSpanProcessor(second);
    running = await startTelemetry({ serviceName: 'two', spanProcessors: [processor], env: {} });
    await nestedSpans();
    await processor.forceFlush();
    expect(
      second
        .getFinishedSpans()
        .map((s) => s.name)
        .sort(),
    ).toEqual(['first', 'parent', 'second']);
  });

  it('with no endpoint and no processors, registers nothing: spans are not recorded', async () => {
    running = await startTelemetry({ serviceName: 'quiet', env: {} });
    expect(running.otlpTracesUrl).toBeNull();
    const span = trace.getTracer('test').startSpan('nothing');
    expect(span.isRecording()).toBe(false);
    span.end();
  });

  it('exports spans over OTLP/HTTP to the configured endpoint', async () => {
    const received: Array<{ method: string; url: string; contentType: string; body: string }> = [];
    const server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({
          method: req.method ?? '',
          url: req.url ?? '',
          contentType: req.headers['content-type'] ?? '',
          body: Buffer.concat(chunks).toString('utf8'),
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      running = await startTelemetry({ serviceName: 'veetbot-otlp', otlpEndpoint: `http://127.0.0.1:${port}`, env: {} });
      expect(running.otlpTracesUrl).toBe(`http://127.0.0.1:${port}/v1/traces`);
      await nestedSpans();
      // Shutdown flushes the batch processor: the export has happened when it resolves.
      await running.shutdown();
      running = null;

      expect(received).toHaveLength(1);
      const request = received[0]!;
      expect(request.method).toBe('POST');
      expect(request.url).toBe('/v1/traces');
      expect(request.contentType).toMatch(/^application\/json/);
      const body = JSON.parse(request.body) as {
        resourceSpans: Array<{
          resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
          scopeSpans: Array<{ spans: Array<{ name: string }> }>;
        }>;
      };
      const resourceSpans = body.resourceSpans[0]!;
      expect(resourceSpans.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue).toBe('veetbot-otlp');
      expect(resourceSpans.scopeSpans.flatMap((s) => s.spans.map((span) => span.name)).sort()).toEqual(['first', 'parent', 'second']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('otlpTracesUrl', () => {
  it('follows the OTLP exporter rules: the option, then the traces variable as-is, then the base variable plus /v1/traces', () => {
    expect(otlpTracesUrl({ env: {} })).toBeNull();
    expect(otlpTracesUrl({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: '  ' } })).toBeNull();
    expect(otlpTracesUrl({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' } })).toBe('http://collector:4318/v1/traces');
    expect(otlpTracesUrl({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/otlp/' } })).toBe(
      'http://collector:4318/otlp/v1/traces',
    );
    expect(
      otlpTracesUrl({
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9999/custom' },
      }),
    ).toBe('http://traces:9999/custom');
    expect(
      otlpTracesUrl({ otlpEndpoint: 'http://option:4318', env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9999/custom' } }),
    ).toBe('http://option:4318/v1/traces');
  });
});
