import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { traceCarrier, traceHeaders, withTraceHeaders, withTraceMeta } from '../src/connection/trace-propagation';

/** docs/adr/0068: what goes to the MCP server; the real round trip is apps/integration-tests/test/e2e-trace-across-processes.test.ts. */
describe('trace propagation to an MCP server', () => {
  it('merges traceparent/tracestate into params._meta, keeping its other keys; nothing without a carrier', () => {
    const params = { name: 'read_item', arguments: { id: 'x' }, _meta: { progressToken: 7 } };
    expect(withTraceMeta(params, null)).toBe(params);
    expect(withTraceMeta(params, { traceparent: 'tp', tracestate: 'ts' })).toEqual({
      name: 'read_item',
      arguments: { id: 'x' },
      _meta: { progressToken: 7, traceparent: 'tp', tracestate: 'ts' },
    });
    expect(withTraceMeta({ _meta: 'not an object' }, { traceparent: 'tp' })).toEqual({ _meta: { traceparent: 'tp' } });
    expect(params._meta).toEqual({ progressToken: 7 });
  });

  it('with no SDK registered there is nothing to send', () => {
    const context = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: 1,
    });
    expect(traceCarrier(context)).toBeNull();
  });

  it('the headers are those of the request being sent, and none outside it', async () => {
    expect(traceHeaders()).toEqual({});
    const seen = await withTraceHeaders({ traceparent: 'tp' }, async () => {
      await new Promise((r) => setTimeout(r, 1));
      return traceHeaders();
    });
    expect(seen).toEqual({ traceparent: 'tp' });
    expect(traceHeaders()).toEqual({});
  });
});
