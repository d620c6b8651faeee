import { describe, expect, it } from 'vitest';
import { processSecrets, tracingLine } from '../src/process-log';

/** docs/adr/0069: the values the process's log must never write, picked from its environment. */
describe('processSecrets', () => {
  it('the database password, the metrics token, the secrets keys and the collector headers; never the demo key', () => {
    const secrets = processSecrets({
      DATABASE_URL: 'postgres://veetbot:p%40ss-word@db:5432/veetbot',
      VEETBOT_METRICS_TOKEN: 'metrics-token-1',
      VEETBOT_SECRETS_KEY: 'base64key==',
      VEETBOT_SECRETS_PREVIOUS_KEYS: 'old1, old2',
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20collector-token,x-tenant=ops',
      VEETBOT_DEMO_API_KEY: 'vbk_demo_printed_on_purpose',
    });
    expect(secrets).toEqual(
      expect.arrayContaining([
        'p@ss-word',
        'metrics-token-1',
        'base64key==',
        'old1',
        'old2',
        'Bearer%20collector-token',
        'Bearer collector-token',
        'ops',
      ]),
    );
    expect(secrets).not.toContain('vbk_demo_printed_on_purpose');
    expect(processSecrets({ DATABASE_URL: 'not a url' })).toEqual([]);
    expect(processSecrets({})).toEqual([]);
  });

  it('the tracing line says why it is off, and never shows credentials in the collector URL', () => {
    expect(tracingLine(null, {})).toBe('  tracing: off (set OTEL_EXPORTER_OTLP_ENDPOINT to turn it on)');
    expect(tracingLine(null, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).toBe(
      '  tracing: off (OTEL_SDK_DISABLED=true)',
    );
    const line = tracingLine({ otlpTracesUrl: 'https://user:pw@collector:4318/v1/traces?key=k', shutdown: async () => undefined }, {});
    expect(line).toBe('  tracing: on, OTLP/HTTP to https://collector:4318/v1/traces');
  });
});
