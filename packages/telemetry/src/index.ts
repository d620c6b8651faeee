export { PrometheusToolMetrics, TOOL_DURATION_BUCKETS, TOOL_OUTPUT_BYTES_BUCKETS, type PrometheusToolMetricsOptions } from './prometheus-tool-metrics';
export { NoopToolMetrics } from './noop-tool-metrics';
export { startTelemetry, otlpTracesUrl, type Telemetry, type TelemetryOptions } from './start-telemetry';
