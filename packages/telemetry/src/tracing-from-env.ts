import { otlpTracesUrl, startTelemetry, type Telemetry } from './start-telemetry';

/**
 * Whether this process traces, from the standard OpenTelemetry environment (docs/adr/0068):
 * on only when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, the full URL, or
 * OTEL_EXPORTER_OTLP_ENDPOINT, the base) and neither OTEL_SDK_DISABLED=true nor
 * OTEL_TRACES_EXPORTER=none says no. Off, nothing of the SDK is loaded (docs/adr/0048).
 */
export type TracingDecision =
  | { readonly on: true; readonly otlpTracesUrl: string }
  | { readonly on: false; readonly reason: 'no_endpoint' | 'sdk_disabled' | 'exporter_none' };

export function tracingDecision(env: Readonly<Record<string, string | undefined>>): TracingDecision {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return { on: false, reason: 'sdk_disabled' };
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((e) => e.trim().toLowerCase());
  if (exporters.includes('none')) return { on: false, reason: 'exporter_none' };
  const url = otlpTracesUrl({ env });
  return url === null ? { on: false, reason: 'no_endpoint' } : { on: true, otlpTracesUrl: url };
}

/**
 * Start tracing for a role when the environment asks for it: the SDK with an OTLP/HTTP (JSON)
 * exporter to the configured URL, the sampler from OTEL_TRACES_SAMPLER / _ARG (the SDK's
 * default: parentbased_always_on), resource attributes from OTEL_RESOURCE_ATTRIBUTES and
 * service.name from OTEL_SERVICE_NAME (else `serviceName`). Null when tracing is off.
 */
export async function startTracingFromEnv(options: {
  readonly serviceName: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}): Promise<Telemetry | null> {
  const decision = tracingDecision(options.env);
  if (!decision.on) return null;
  return startTelemetry({ serviceName: options.serviceName, env: options.env });
}
