import {
  INVALID_SPAN_CONTEXT,
  SpanStatusCode,
  context,
  trace,
  type Context,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { VeetbotError, isTerminalInvocationStatus, type ToolSpec } from '@veetbot/domain';
import type { ToolMetrics } from '@veetbot/ports';
import { displayedToolName } from './displayed-tool-name';
import type { PipelineResult } from './pipeline-result';
import type { Concluded } from './render-item';
import type { ToolCallRequest } from './tool-call-request';

/**
 * § Spans and metrics: the spans the executor creates. `mcp.request` (the MCP adapter, one per
 * JSON-RPC round trip) and `sandbox.execute` (the sandbox adapter) become children of
 * `tool.execute` without naming it: it is the active span while step 10 runs the tool.
 */
export const TOOL_SPAN_NAMES = { execute: 'tool.execute', validate: 'tool.validate', policy: 'policy.evaluate' } as const;

/** The instrumentation scope of the executor's spans. */
export const EXECUTOR_TRACER_NAME = 'veetbot.executor';

/** The `name` label of a call that resolved to no tool: what the model made up is not a label value. */
export const UNRESOLVED_TOOL_NAME = '(unresolved)';

const FAILED_OUTCOMES: ReadonlySet<string> = new Set(['failed', 'unavailable', 'uncertain']);

/**
 * What one call's telemetry learns on the way through the pipeline. Identity and
 * classification only: arguments and results never reach a span or a metric.
 */
export class CallTrace {
  spec: ToolSpec | null = null;
  /** Step 10's own duration; null when no tool ran. */
  durationMs: number | null = null;
  outputBytes: number | null = null;
  /** The result is a recorded outcome read back (§ Deduplication, rule 2), not a new conclusion. */
  replayed = false;
  private child: Span | null = null;

  constructor(
    readonly span: Span,
    private readonly tracer: Tracer,
    /** The context with tool.execute active; null when there is no trace to carry. */
    private readonly parent: Context | null,
  ) {}

  /**
   * End the open child span, if any, and start `name` beneath tool.execute. A tool.execute that
   * is not recording (no SDK registered, or sampled out) gets no children: nothing pays for them.
   */
  enter(name: (typeof TOOL_SPAN_NAMES)['validate' | 'policy']): void {
    this.child?.end();
    this.child = this.parent !== null && this.span.isRecording() ? this.tracer.startSpan(name, undefined, this.parent) : null;
    if (this.timings !== null) {
      this.closeTiming();
      this.timings.push({ name, startMs: epochMs(), endMs: null });
    }
  }

  /**
   * Where steps 4–7's child spans began and ended, kept by a dry run whose admission the durable
   * run may carry (pipeline.ts, `planned`): that run puts the same spans beneath its own
   * tool.execute, at the times the work was done, instead of doing the work again.
   */
  timings: Array<{ name: (typeof TOOL_SPAN_NAMES)['validate' | 'policy']; startMs: number; endMs: number | null }> | null = null;

  private closeTiming(): void {
    const open = this.timings?.at(-1);
    if (open !== undefined && open.endMs === null) open.endMs = epochMs();
  }

  /** The child spans of a carried admission, with the times of the dry run that did the work. */
  replayChildren(timings: NonNullable<CallTrace['timings']>): void {
    if (this.parent === null || !this.span.isRecording()) return;
    for (const timing of timings) {
      const child = this.tracer.startSpan(timing.name, { startTime: timing.startMs }, this.parent);
      child.end(timing.endMs ?? timing.startMs);
    }
  }

  leave(): void {
    this.child?.end();
    this.child = null;
    this.closeTiming();
  }

  /**
   * Note whether a concluded result is new or a recorded outcome read back: a terminal write
   * made now carries its row; a replay of an existing terminal row does not.
   */
  settled<T extends Concluded>(concluded: T): T {
    this.replayed = !('row' in concluded) && isTerminalInvocationStatus(concluded.invocationStatus);
    return concluded;
  }
}

function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

let tracerCache: { readonly provider: TracerProvider; readonly tracer: Tracer } | null = null;

/**
 * trace.getTracer('veetbot.executor'), kept while the global provider is the same object. Not
 * kept for good: shutting telemetry down (trace.disable) replaces the API's provider, and a
 * tracer from the old one would never see the next SDK.
 */
function executorTracer(): Tracer {
  const provider = trace.getTracerProvider();
  if (tracerCache?.provider !== provider) tracerCache = { provider, tracer: provider.getTracer(EXECUTOR_TRACER_NAME) };
  return tracerCache.tracer;
}

/**
 * Run one call inside `tool.execute`, then put the attributes of § Spans and metrics on it and
 * record the metrics once: for a concluded call that is not a dry run and not a replay.
 *
 * The span is made active (so the MCP adapter's `mcp.request` and the sandbox's
 * `sandbox.execute` nest under it) whenever there is a trace to carry. With no SDK registered
 * the API hands out an invalid, non-recording span: then nothing is activated, and a call with
 * no metrics to record pays for no continuation either — steps 1–7 are a hot path.
 */
export function traceToolCall(
  metrics: ToolMetrics | undefined,
  request: ToolCallRequest,
  dryRun: boolean,
  parallelGroup: string | null,
  body: (t: CallTrace) => Promise<PipelineResult>,
): Promise<PipelineResult> {
  const tracer = executorTracer();
  const span = tracer.startSpan(TOOL_SPAN_NAMES.execute);
  const recording = span.isRecording();
  // The no-SDK span carries the API's INVALID_SPAN_CONTEXT itself: the identity test spares the
  // hot path isSpanContextValid's two regular expressions.
  const spanContext = span.spanContext();
  const carry = recording || (spanContext !== INVALID_SPAN_CONTEXT && trace.isSpanContextValid(spanContext));
  const active = carry ? trace.setSpan(context.active(), span) : null;
  const t = new CallTrace(span, tracer, active);
  const pending = active === null ? body(t) : context.with(active, body, undefined, t);
  // A span that is not recording needs no end (NonRecordingSpan.end does nothing).
  if (!recording && (dryRun || metrics === undefined)) return pending;
  return pending.then(
    (result) => {
      t.leave();
      if (recording) {
        annotate(span, t, request, parallelGroup, result);
        span.end();
      }
      if (metrics !== undefined && !dryRun && result.kind === 'concluded' && !t.replayed) record(metrics, t, result.item);
      return result;
    },
    (error: unknown) => {
      t.leave();
      if (recording) {
        // The code or the class name, never the message: a message can quote what the call carried.
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: VeetbotError.isInstance(error) ? error.code : error instanceof Error ? error.name : 'unknown',
        });
        span.end();
      }
      throw error;
    },
  );
}

function annotate(span: Span, t: CallTrace, request: ToolCallRequest, parallelGroup: string | null, result: PipelineResult): void {
  const spec = t.spec;
  // An unresolved name is model output: shown only as the row and the event show it.
  span.setAttribute('tool.name', spec?.name ?? displayedToolName(request.toolName));
  if (spec !== null) {
    span.setAttribute('tool.source', spec.source);
    span.setAttribute('tool.version', spec.version);
    span.setAttribute('tool.idempotency_class', spec.idempotency);
  }
  if (parallelGroup !== null) span.setAttribute('tool.parallel_group', parallelGroup);
  // § Control tools: the call waits in another process, possibly hours; the span ends here.
  if (result.kind === 'suspended') {
    span.setAttribute('tool.suspended_kind', result.suspendedKind);
    span.addEvent('tool.suspended', { 'tool.suspended_kind': result.suspendedKind });
  }
  if (result.kind !== 'concluded') return;
  const { outcome, truncated } = result.item;
  span.setAttribute('tool.outcome_status', outcome.status);
  span.setAttribute('tool.reason_code', outcome.reason_code);
  span.setAttribute('tool.truncated', truncated);
  if (FAILED_OUTCOMES.has(outcome.status)) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.reason_code });
}

function record(metrics: ToolMetrics, t: CallTrace, item: Concluded['item']): void {
  try {
    metrics.recordToolCall({
      name: t.spec?.name ?? UNRESOLVED_TOOL_NAME,
      // The row's convention for a call that resolved to nothing (lifecycle/record-refusal.ts).
      source: t.spec?.source ?? 'builtin',
      outcomeStatus: item.outcome.status,
      reasonCode: item.outcome.reason_code,
      durationSeconds: t.durationMs === null ? null : t.durationMs / 1000,
      outputBytes: t.outputBytes,
      truncated: item.truncated,
    });
  } catch {
    // Telemetry never fails a call: the outcome is already persisted and the model must get it.
  }
}
