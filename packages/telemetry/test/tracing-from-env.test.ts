import { describe, expect, it } from 'vitest';
import { startTracingFromEnv, tracingDecision } from '../src/tracing-from-env';

describe('tracingDecision (docs/adr/0068)', () => {
  it('is off without an endpoint, and on with either OTLP endpoint variable', () => {
    expect(tracingDecision({})).toEqual({ on: false, reason: 'no_endpoint' });
    expect(tracingDecision({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toEqual({ on: false, reason: 'no_endpoint' });
    expect(tracingDecision({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual({
      on: true,
      otlpTracesUrl: 'http://collector:4318/v1/traces',
    });
    expect(tracingDecision({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/custom' })).toEqual({
      on: true,
      otlpTracesUrl: 'http://c:4318/custom',
    });
  });

  it('OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn it off whatever the endpoint', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(tracingDecision({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' })).toEqual({ on: false, reason: 'sdk_disabled' });
    expect(tracingDecision({ ...endpoint, OTEL_SDK_DISABLED: 'false' }).on).toBe(true);
    expect(tracingDecision({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' })).toEqual({ on: false, reason: 'exporter_none' });
    expect(tracingDecision({ ...endpoint, OTEL_TRACES_EXPORTER: 'otlp' }).on).toBe(true);
  });

  it('starts nothing when off', async () => {
    expect(await startTracingFromEnv({ serviceName: 'x', env: {} })).toBeNull();
  });
});
