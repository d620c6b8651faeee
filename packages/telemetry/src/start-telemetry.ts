import { context, propagation, trace } from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface TelemetryOptions {
  /** service.name on every span (`veetbot-api`, `veetbot-worker`); OTEL_SERVICE_NAME, when set, wins. */
  readonly serviceName: string;
  /**
   * The OTLP/HTTP base URL (`http://collector:4318`); spans go to `<base>/v1/traces`. Default:
   * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL), else OTEL_EXPORTER_OTLP_ENDPOINT (the
   * base). With none of the three, nothing is exported.
   */
  readonly otlpEndpoint?: string;
  /** Extra processors, ahead of the OTLP one (tests pass a SimpleSpanProcessor over an in-memory exporter). */
  readonly spanProcessors?: readonly SpanProcessor[];
  /** Where the endpoint variables are read. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface Telemetry {
  /** The URL spans are exported to over OTLP/HTTP; null when no endpoint is configured. */
  readonly otlpTracesUrl: string | null;
  /** Flush and stop every processor, then unregister the global providers (a later start works). */
  shutdown(): Promise<void>;
}

/** The traces URL for the options and environment, by the OTLP exporter's own rules; null: export nothing. */
export function otlpTracesUrl(options: Pick<TelemetryOptions, 'otlpEndpoint' | 'env'>): string | null {
  const env = options.env ?? process.env;
  const base = nonEmpty(options.otlpEndpoint);
  if (base !== null) return appendTracesPath(base);
  const specific = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  if (specific !== null) return specific;
  const general = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  return general === null ? null : appendTracesPath(general);
}

/**
 * Start tracing for this process (§ Spans and metrics): the executor's `tool.execute` with
 * `tool.validate` and `policy.evaluate` beneath it, the MCP adapter's `mcp.request`, the
 * sandbox's `sandbox.execute`. Call it once, before the pipeline runs; the code that creates
 * spans only ever sees @opentelemetry/api, which is a no-op until this registers a provider.
 *
 * Only traces: metrics are prom-client's (PrometheusToolMetrics), and the SDK's own metric
 * readers and log exporters are switched off rather than left to their env defaults, which
 * would push OTLP to localhost:4318 with no endpoint configured.
 */
export async function startTelemetry(options: TelemetryOptions): Promise<Telemetry> {
  // docs/adr/0048: the SDK and the exporter are imported here, by the one call that uses them,
  // never by a static import a bundle would evaluate at every start.
  const [{ OTLPTraceExporter }, { NodeSDK, resources }, { BatchSpanProcessor }] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/sdk-trace-base'),
  ]);
  const env = options.env ?? process.env;
  const url = otlpTracesUrl(options);
  const spanProcessors: SpanProcessor[] = [...(options.spanProcessors ?? [])];
  if (url !== null) spanProcessors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url })));
  const sdk = new NodeSDK({
    serviceName: nonEmpty(env.OTEL_SERVICE_NAME) ?? options.serviceName,
    spanProcessors,
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
    // No processDetector: process.command_args can carry configuration an operator did not
    // mean to ship to a collector.
    resourceDetectors: [resources.envDetector, resources.hostDetector],
  });
  sdk.start();
  let stopped: Promise<void> | null = null;
  return {
    otlpTracesUrl: url,
    shutdown: () => {
      stopped ??= sdk.shutdown().finally(() => {
        trace.disable();
        context.disable();
        propagation.disable();
      });
      return stopped;
    },
  };
}

function nonEmpty(value: string | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? null : trimmed;
}

function appendTracesPath(base: string): string {
  return `${base.endsWith('/') ? base : `${base}/`}v1/traces`;
}
