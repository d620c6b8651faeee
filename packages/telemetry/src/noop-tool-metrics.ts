import type {
  McpConnectFailureObservation,
  McpRequestObservation,
  ReconciliationObservation,
  ToolCallObservation,
  ToolMetrics,
} from '@veetbot/ports';

/** Metrics off: for compositions that expose no /metrics (the CLI's one-shot commands, tests). */
export class NoopToolMetrics implements ToolMetrics {
  recordToolCall(_observation: ToolCallObservation): void {}
  recordMcpRequest(_observation: McpRequestObservation): void {}
  recordMcpConnectFailure(_observation: McpConnectFailureObservation): void {}
  recordReconciliation(_observation: ReconciliationObservation): void {}
}
