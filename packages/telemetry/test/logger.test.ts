import { Writable } from 'node:stream';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { createLogger, logFormatFrom } from '../src/logger';
import { startTelemetry } from '../src/start-telemetry';

/** A stream that keeps what it was given. */
function sink(): { stream: Writable; text: () => string; lines: () => Record<string, unknown>[] } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return {
    stream,
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

const SECRET = 'tok-7f1c9a2e4b8d6053-secret';

describe('createLogger (docs/adr/0069)', () => {
  it('writes one JSON object a line, info to out and errors to err only, with role, level name and ISO time', async () => {
    const out = sink();
    const err = sink();
    const log = await createLogger({ role: 'worker', format: 'json', out: out.stream, err: err.stream, env: {} });
    log.info('step ran', { tenant_id: 't1', run_id: 'r1', step_number: 2, calls: 1 });
    log.warn('slow');
    log.error('claim failed (will retry)', { code: 'store.unavailable' });
    expect(out.lines()).toHaveLength(2);
    expect(out.lines()[0]).toMatchObject({
      level: 'info',
      pid: process.pid,
      hostname: expect.any(String),
      role: 'worker',
      msg: 'step ran',
      tenant_id: 't1',
      run_id: 'r1',
      step_number: 2,
      calls: 1,
    });
    expect(Number.isNaN(Date.parse(String(out.lines()[0]!.time)))).toBe(false);
    expect(out.lines()[1]).toMatchObject({ level: 'warn', msg: 'slow' });
    expect(err.lines()).toEqual([expect.objectContaining({ level: 'error', msg: 'claim failed (will retry)', code: 'store.unavailable' })]);
  });

  it('carries the active span ids, and a stored traceparent as the trace id of the line', async () => {
    const exporter = new InMemorySpanExporter();
    const telemetry = await startTelemetry({ serviceName: 'log-test', spanProcessors: [new SimpleSpanProcessor(exporter)], env: {} });
    try {
      const out = sink();
      const log = await createLogger({ role: 'api', format: 'json', out: out.stream, err: sink().stream, env: {} });
      let ids = { traceId: '', spanId: '' };
      trace.getTracer('t').startActiveSpan('request', (span) => {
        ids = span.spanContext();
        log.info('inside');
        span.end();
      });
      log.info('outside');
      log.info('step ran', { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
      log.info('bad traceparent', { traceparent: '00-zz-b7ad6b7169203331-01' });
      const [inside, outside, stored, bad] = out.lines();
      expect(inside).toMatchObject({ trace_id: ids.traceId, span_id: ids.spanId });
      expect(outside).not.toHaveProperty('trace_id');
      expect(stored).toMatchObject({ trace_id: '0af7651916cd43dd8448eb211c80319c', span_id: 'b7ad6b7169203331' });
      expect(stored).not.toHaveProperty('traceparent');
      expect(bad).not.toHaveProperty('trace_id');
    } finally {
      await telemetry.shutdown();
    }
  });

  it('never writes a secret: not in an error message (raw, base64, JSON-escaped), a field, or a credential-named key; no stack', async () => {
    const out = sink();
    const err = sink();
    const log = await createLogger({ role: 'api', secrets: [SECRET], format: 'json', out: out.stream, err: err.stream, env: {} });
    const error = new Error(`connect failed with ${SECRET}\n    at secretFrame (${SECRET}.js:1:1)`);
    log.error('internal error', { err: error, method: 'POST', path: '/v1/sessions' });
    log.error('wrapped', { err: new Error(`payload ${JSON.stringify({ t: SECRET })} and ${Buffer.from(SECRET).toString('base64')}`) });
    log.info(`message with ${SECRET}`, {
      detail: `field ${SECRET}`,
      nested: { list: [SECRET] },
      authorization: 'Bearer abc',
      headers: { token: 'xyz' },
    });
    const text = out.text() + err.text();
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(Buffer.from(SECRET).toString('base64'));
    expect(text).not.toContain('Bearer abc');
    expect(text).not.toContain('xyz');
    expect(text).not.toContain('secretFrame');
    const [first] = err.lines();
    expect(first).toMatchObject({ level: 'error', error: { code: 'Error', message: 'connect failed with [redacted credential]' } });
    expect(out.lines()[0]).toMatchObject({ authorization: '[redacted]', headers: { token: '[redacted]' } });
  });

  it('pretty: a human-readable line (pino-pretty), not JSON; the format follows LOG_FORMAT, else the terminal', async () => {
    const out = sink();
    const log = await createLogger({ role: 'api+worker', format: 'pretty', out: out.stream, err: sink().stream, env: {} });
    log.info('veetbot listening on http://127.0.0.1:8787', { tenant_id: 'demo' });
    expect(out.text()).toContain('INFO');
    expect(out.text()).toContain('veetbot listening on http://127.0.0.1:8787');
    expect(() => JSON.parse(out.text().split('\n')[0]!)).toThrow();
    expect(logFormatFrom({}, true)).toBe('pretty');
    expect(logFormatFrom({}, false)).toBe('json');
    expect(logFormatFrom({ LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(logFormatFrom({ LOG_FORMAT: 'PRETTY' }, false)).toBe('pretty');
    expect(logFormatFrom({ LOG_FORMAT: 'xml' }, false)).toBe('json');
  });
});
