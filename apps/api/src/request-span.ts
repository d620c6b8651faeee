import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, trace, type Link } from '@opentelemetry/api';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { ApiEnv } from './deps';

const TRACER_NAME = 'veetbot.api';
/** W3C Trace Context version 00; a trace or parent id of all zeros is invalid. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * One SERVER span per api request, the root of the call's trace (docs/adr/0068): the step it
 * stores carries this span's context to the worker, and the worker's spans and the MCP server's
 * join it. An incoming `traceparent` is a tenant's claim, so it is never the parent — a caller
 * could otherwise choose the trace id (landing its calls in another's trace, or one trace id on
 * every call), or the sampled flag (forcing every call recorded, or none). It is kept as a span
 * link, so the caller's own trace can still be found from ours; `tracestate` and baggage are not
 * read at all. The response carries `traceresponse` (Trace Context Level 2) naming our trace.
 */
export function requestSpan(): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const tracer = trace.getTracer(TRACER_NAME);
    const link = incomingLink(c.req.header('traceparent'));
    const span = tracer.startSpan(
      c.req.method,
      {
        kind: SpanKind.SERVER,
        root: true,
        ...(link === null ? {} : { links: [link] }),
        attributes: { 'http.request.method': c.req.method },
      },
      ROOT_CONTEXT,
    );
    const spanContext = span.spanContext();
    if (trace.isSpanContextValid(spanContext))
      c.header('traceresponse', `00-${spanContext.traceId}-${spanContext.spanId}-0${spanContext.traceFlags & 1}`);
    try {
      await context.with(trace.setSpan(ROOT_CONTEXT, span), next);
    } finally {
      // The route's template, never the path: ids are not a span name (cardinality), and
      // an unknown path is a tenant's text.
      const route = routePath(c);
      if (route !== '' && route !== '/*' && route !== '*') {
        span.updateName(`${c.req.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      const status = c.res.status;
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: String(status) });
      span.end();
    }
  };
}

/** The caller's traceparent as a link, or null when absent or not valid W3C (then ignored). */
export function incomingLink(header: string | undefined): Link | null {
  const value = header?.trim();
  if (value === undefined || value.length !== 55) return null;
  const match = TRACEPARENT.exec(value);
  if (match === null || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return null;
  return {
    context: { traceId: match[1]!, spanId: match[2]!, traceFlags: Number.parseInt(match[3]!, 16) & 1, isRemote: true },
    attributes: { 'veetbot.link': 'caller_traceparent' },
  };
}
