import { context, SpanKind, SpanStatusCode, trace, type Context, type Tracer, type TracerProvider } from '@opentelemetry/api';
import type { McpRequestOutcome, ToolMetrics } from '@veetbot/ports';
import { isProtocolError, isSdkError } from './sdk';

/** The instrumentation scope of the adapter's spans. */
export const MCP_TRACER_NAME = 'veetbot.mcp-adapter';
export const MCP_REQUEST_SPAN = 'mcp.request';

/** Who a round trip is recorded for: the configured server id (never its URL) and the metrics port. */
export interface RequestTelemetry {
  readonly serverId: string;
  readonly metrics: ToolMetrics | undefined;
}

/** How one round trip is bounded, for telling `timeout` from `cancelled`. */
export interface RequestBounds {
  /** The caller's abort signal (a call's ctx.cancellation, the handshake's deadline or stop). */
  readonly signal?: AbortSignal | undefined;
  /**
   * The absolute wall-clock deadline the request ran under (epoch ms): an abort observed at or
   * after it is the deadline passing, not a cancellation. The executor aborts a call's signal at
   * its own deadline (step 10), which comes before our request timer; this is how that is told
   * apart from a run being cancelled.
   */
  readonly deadlineAt: number;
}

let tracerCache: { readonly provider: TracerProvider; readonly tracer: Tracer } | null = null;

/**
 * trace.getTracer, kept while the global provider is the same object (as the executor keeps
 * its own): a tracer obtained once for good would hold the first SDK's tracer after a
 * shutdown and a new start.
 */
function mcpTracer(): Tracer {
  const provider = trace.getTracerProvider();
  if (tracerCache?.provider !== provider) tracerCache = { provider, tracer: provider.getTracer(MCP_TRACER_NAME) };
  return tracerCache.tracer;
}

/**
 * mcp_requests_total's outcome for a failed round trip (ports/metrics.ts): an abort is checked
 * first because the SDK turns an abort reason into an SdkError with the RequestTimeout code.
 */
export function requestOutcome(error: unknown, bounds: RequestBounds): Exclude<McpRequestOutcome, 'ok'> {
  const signal = bounds.signal;
  if (signal?.aborted === true) {
    const reason: unknown = signal.reason;
    if (reason instanceof Error && reason.name === 'TimeoutError') return 'timeout';
    return Date.now() >= bounds.deadlineAt ? 'timeout' : 'cancelled';
  }
  if (isSdkError(error, 'RequestTimeout')) return 'timeout';
  // 2.x: only a JSON-RPC error answer is a ProtocolError; the SDK's local failures are SdkErrors.
  if (isProtocolError(error)) return 'rpc_error';
  // No JSON-RPC answer: a closed transport, an HTTP status (401 included), an egress refusal,
  // a line over the cap, a result that did not parse.
  return 'transport_error';
}

/**
 * § Spans and metrics: one `mcp.request` span and one `mcp_requests_total` sample per JSON-RPC
 * round trip. The span's parent is `parent` (default: the active context), so a tools/call made
 * while the executor's `tool.execute` is active nests under it. Attributes: `mcp.server`,
 * `mcp.method`, `mcp.outcome` — never arguments, results, error text or credentials; a failed
 * round trip sets status ERROR with the outcome, not the error's message.
 *
 * The span is not made active while `work` runs: nothing the SDK does inside it is a child of
 * the round trip, and listeners it registers do not inherit it. `work` is given its context to
 * send to the server (connection/trace-propagation.ts).
 */
export async function traceRequest<T>(
  telemetry: RequestTelemetry,
  method: string,
  bounds: RequestBounds,
  work: (requestContext: Context) => Promise<T>,
  parent: Context = context.active(),
): Promise<T> {
  const span = mcpTracer().startSpan(
    MCP_REQUEST_SPAN,
    { kind: SpanKind.CLIENT, attributes: { 'mcp.server': telemetry.serverId, 'mcp.method': method } },
    parent,
  );
  let outcome: McpRequestOutcome = 'ok';
  try {
    // The round trip's context, for propagation to the server (docs/adr/0068); not made active.
    return await work(trace.setSpan(parent, span));
  } catch (error) {
    outcome = requestOutcome(error, bounds);
    throw error;
  } finally {
    if (span.isRecording()) {
      span.setAttribute('mcp.outcome', outcome);
      if (outcome !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
      span.end();
    }
    record(telemetry.metrics, (m) => m.recordMcpRequest({ server: telemetry.serverId, method, outcome }));
  }
}

/** mcp_connect_failures_total: one failed connection attempt, by its stable reason code. */
export function countConnectFailure(metrics: ToolMetrics | undefined, serverId: string, reasonCode: string): void {
  record(metrics, (m) => m.recordMcpConnectFailure({ server: serverId, reasonCode }));
}

function record(metrics: ToolMetrics | undefined, write: (metrics: ToolMetrics) => void): void {
  if (metrics === undefined) return;
  try {
    write(metrics);
  } catch {
    // Telemetry never fails a request (the port's rule; kept even against a faulty implementation).
  }
}
