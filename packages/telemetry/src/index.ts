export { PrometheusToolMetrics } from './prometheus-tool-metrics';
export { startTelemetry, type Telemetry } from './start-telemetry';
