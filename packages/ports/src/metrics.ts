import type { ToolOutcomeStatus, ToolSource } from '@veetbot/domain';

/**
 * One concluded tool call, as the metrics see it (§ Spans and metrics). Identity and
 * classification only: no tenant (a high-cardinality label that belongs in the row), no
 * arguments, no result.
 */
export interface ToolCallObservation {
  /**
   * The registered tool name. A call whose name resolved to no tool is recorded as
   * `(unresolved)`: the name the model made up is unbounded text, never a label value.
   */
  readonly name: string;
  readonly source: ToolSource;
  readonly outcomeStatus: ToolOutcomeStatus;
  readonly reasonCode: string;
  /** How long the tool itself ran (step 10), in seconds; null when no tool ran. */
  readonly durationSeconds: number | null;
  /** output_bytes of the row; null when no tool output was measured. */
  readonly outputBytes: number | null;
  readonly truncated: boolean;
}

/**
 * How one MCP JSON-RPC round trip ended (mcp_requests_total's `outcome` label): `ok` a result,
 * `rpc_error` a JSON-RPC error response, `transport_error` no response (connection, HTTP
 * status, malformed frame), `timeout` the deadline passed, `cancelled` the call was aborted.
 */
export type McpRequestOutcome = 'ok' | 'rpc_error' | 'transport_error' | 'timeout' | 'cancelled';

export interface McpRequestObservation {
  /** The configured server id (never its URL). */
  readonly server: string;
  /** The JSON-RPC method: `initialize`, `tools/list`, `tools/call`, … */
  readonly method: string;
  readonly outcome: McpRequestOutcome;
}

export interface McpConnectFailureObservation {
  readonly server: string;
  /** The stable code (tool.server_unreachable, tool.auth_failed, …), never external text. */
  readonly reasonCode: string;
}

/**
 * § Spans and metrics: the eight tool and MCP metrics, behind a port so the executor and the MCP
 * adapter record them without knowing the metrics library.
 *
 * recordToolCall, once per concluded call (dry runs and replays of a recorded outcome record
 * nothing), feeds six metrics:
 *   tool_calls_total{name, source, outcome_status}   every call
 *   tool_failures_total{name, source, reason_code}   outcome failed, unavailable or uncertain
 *   tool_duration_seconds{name, source}              when a tool ran (durationSeconds not null)
 *   tool_output_bytes{name, source}                  when outputBytes is not null
 *   tool_truncations_total{name, source}             when truncated
 *   tool_uncertain_total{name, source}               outcome uncertain (the one to alert on)
 * recordMcpRequest: mcp_requests_total{server, method, outcome}, once per JSON-RPC round trip.
 * recordMcpConnectFailure: mcp_connect_failures_total{server, reason_code}, once per failed
 * connection attempt.
 *
 * Implementations must not throw: telemetry never fails a call.
 */
export interface ToolMetrics {
  recordToolCall(observation: ToolCallObservation): void;
  recordMcpRequest(observation: McpRequestObservation): void;
  recordMcpConnectFailure(observation: McpConnectFailureObservation): void;
  /**
   * docs/adr/0063: tool_reconciled_total{name, outcome}, once per reconciliation attempt the
   * sweep makes on an UNCERTAIN row (outcome applied, not_applied, unknown or error). Optional
   * so an older implementation still satisfies the port.
   */
  recordReconciliation?(observation: ReconciliationObservation): void;
}

export interface ReconciliationObservation {
  /**
   * The tool name: a builtin's, or an operator MCP server's (docs/adr/0066: only operator servers
   * get a lookup reconciler) — never a tenant's name.
   */
  readonly name: string;
  readonly outcome: 'applied' | 'not_applied' | 'unknown' | 'error';
}
