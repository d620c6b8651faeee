import { AsyncLocalStorage } from 'node:async_hooks';
import { propagation, type Context } from '@opentelemetry/api';

/**
 * W3C trace context out to the MCP server (docs/adr/0068): the `mcp.request` span's context
 * as `traceparent` (and `tracestate`) in the request's `params._meta`, the MCP convention for
 * trace propagation, and as HTTP headers of the same names on the Streamable HTTP transport.
 * Only those two keys: baggage is never sent to a server (a tenant's server would read what
 * other parts of the process put there). With tracing off nothing is injected at all.
 */
export type TraceCarrier = Readonly<{ traceparent: string; tracestate?: string }>;

export function traceCarrier(requestContext: Context): TraceCarrier | null {
  const carrier: Record<string, string> = {};
  propagation.inject(requestContext, carrier);
  const { traceparent, tracestate } = carrier;
  if (traceparent === undefined || traceparent === '') return null;
  return tracestate === undefined || tracestate === '' ? { traceparent } : { traceparent, tracestate };
}

/**
 * The request's params with the carrier merged into `_meta`; a `_meta` the adapter already
 * set keeps its other keys. No carrier: the params as given (the same object).
 */
export function withTraceMeta(params: Record<string, unknown>, carrier: TraceCarrier | null): Record<string, unknown> {
  if (carrier === null) return params;
  const meta = params._meta;
  const base = typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? (meta as Record<string, unknown>) : {};
  return { ...params, _meta: { ...base, ...carrier } };
}

/*
 * The SDK sends a request's POST synchronously inside `request()` (as for the call's ceiling,
 * pinned-fetch.ts): the fetch reads the carrier of the request being sent from here.
 */
const requestCarrier = new AsyncLocalStorage<TraceCarrier>();

export function withTraceHeaders<T>(carrier: TraceCarrier | null, send: () => T): T {
  return carrier === null ? send() : requestCarrier.run(carrier, send);
}

/** The HTTP headers for the request being sent (none outside a traced request). */
export function traceHeaders(): Readonly<Record<string, string>> {
  return requestCarrier.getStore() ?? {};
}
