import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context } from '@opentelemetry/api';
import { VeetbotError } from '@veetbot/domain';
import type { PendingStep } from '@veetbot/ports';

/**
 * One trace per call across processes (docs/adr/0068): the api stores the W3C trace context of
 * its request span with the step (`steps.batch.trace_context`), and the worker that claims the
 * step opens `step.run` under it, so the pipeline's spans (`tool.execute` and its children, the
 * MCP adapter's `mcp.request`) and the MCP server's own join the api's trace.
 */
export interface StoredTraceContext {
  readonly traceparent: string;
  readonly tracestate?: string;
}

export const STEP_RUN_SPAN = 'step.run';
const TRACER_NAME = 'veetbot.runtime';

/** W3C Trace Context, version 00: trace id and parent id not all zeros (checked below). */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
/** W3C tracestate: at most 32 list members, printable ASCII; 512 characters is the spec's propagation floor. */
const TRACESTATE = /^[\x20-\x7e]{1,512}$/;

/**
 * The stored value, or null when absent or not one the api wrote. Never a reason to refuse the
 * step: a trace that cannot be continued starts a new one.
 */
export function readStoredTraceContext(value: unknown): StoredTraceContext | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const { traceparent, tracestate } = value as Record<string, unknown>;
  if (typeof traceparent !== 'string') return null;
  const match = TRACEPARENT.exec(traceparent);
  if (match === null || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return null;
  if (typeof tracestate === 'string' && TRACESTATE.test(tracestate)) return { traceparent, tracestate };
  return { traceparent };
}

/** The active span's W3C context (what the api stores with a step); null with tracing off. */
export function activeTraceContext(active: Context = context.active()): StoredTraceContext | null {
  if (!trace.getSpanContext(active)) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  return readStoredTraceContext(carrier);
}

/**
 * Run `work` (a step's calls) under a `step.run` span: a child of the stored context when the
 * api stored one, else of the active context (a step submitted in-process). With no SDK
 * registered the span is the no-op one and `work` runs as it would have.
 */
export async function withStepSpan<T>(step: PendingStep, stored: StoredTraceContext | null, work: () => Promise<T>): Promise<T> {
  const parent = stored === null ? context.active() : propagation.extract(ROOT_CONTEXT, { ...stored });
  const span = trace.getTracer(TRACER_NAME).startSpan(
    STEP_RUN_SPAN,
    {
      kind: stored === null ? SpanKind.INTERNAL : SpanKind.CONSUMER,
      // Identity only (§ Spans and metrics: never arguments, never results).
      attributes: { 'veetbot.tenant_id': step.tenantId, 'veetbot.run_id': step.runId, 'veetbot.step_number': step.stepNumber },
    },
    parent,
  );
  // Made active even when not recording (sampled out): its context, flags included, still
  // travels to the MCP server.
  try {
    return await context.with(trace.setSpan(parent, span), work);
  } catch (error) {
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: VeetbotError.isInstance(error) ? error.code : error instanceof Error ? error.name : 'unknown',
    });
    throw error;
  } finally {
    span.end();
  }
}
