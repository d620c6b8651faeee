export { PrometheusToolMetrics } from './prometheus-tool-metrics';
export { startTelemetry, type Telemetry } from './start-telemetry';
export { createLogger, logMessages, type Log, type LogFields } from './logger';
export { startTracingFromEnv, tracingDecision } from './tracing-from-env';
