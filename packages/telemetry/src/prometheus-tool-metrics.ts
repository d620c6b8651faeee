import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type {
  McpConnectFailureObservation,
  McpRequestObservation,
  ReconciliationObservation,
  ToolCallObservation,
  ToolMetrics,
} from '@veetbot/ports';

/**
 * Seconds a tool ran: from a cache hit to the five-minute ceiling a declared timeout may reach.
 * prom-client's default buckets stop at 10 s, which would put every slow MCP call in +Inf.
 */
export const TOOL_DURATION_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** Bytes of tool output: around output.inline_maximum_bytes (4,096) and up to the artifact sizes. */
export const TOOL_OUTPUT_BYTES_BUCKETS: readonly number[] = [256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216];

/** Outcomes that count as a tool failure: denied is policy working, not a tool failing. */
const FAILURE_STATUSES: ReadonlySet<string> = new Set(['failed', 'unavailable', 'uncertain']);

export interface PrometheusToolMetricsOptions {
  /** Also expose prom-client's process metrics (CPU, memory, event loop) on the same registry. */
  readonly collectDefaultMetrics?: boolean;
  /**
   * The operator's MCP server ids (its configuration file): the only server names that are label
   * values. Every other server is a tenant's (docs/adr/0055). Default: none.
   */
  readonly operatorServers?: Iterable<string>;
}

/**
 * The one label value of every tenant server, in `server` and in a tool's `name` (docs/adr/0055):
 * a tenant chooses its server's id and its server chooses its tools' names, so neither is ever a
 * label — /metrics would name what tenants run (to whoever reads it) and a tenant could grow the
 * series without bound. Its calls are still counted, together.
 */
export const TENANT_SERVER_LABEL = 'tenant_server';

/**
 * § Spans and metrics, the eight metrics exactly as the table names them and labels them (and
 * tool_reconciled_total{name, outcome}, docs/adr/0063): every
 * tool metric by name and source, none by tenant — and no name a tenant chose (docs/adr/0055: a
 * tenant server's id and tool names are TENANT_SERVER_LABEL). Each instance owns its Registry, so two in
 * one process (tests, an embedded api + worker) never collide on a global registry.
 */
export class PrometheusToolMetrics implements ToolMetrics {
  readonly registry: Registry;
  private readonly calls: Counter<'name' | 'source' | 'outcome_status'>;
  private readonly failures: Counter<'name' | 'source' | 'reason_code'>;
  private readonly duration: Histogram<'name' | 'source'>;
  private readonly outputBytes: Histogram<'name' | 'source'>;
  private readonly truncations: Counter<'name' | 'source'>;
  private readonly uncertain: Counter<'name' | 'source'>;
  private readonly mcpRequests: Counter<'server' | 'method' | 'outcome'>;
  private readonly mcpConnectFailures: Counter<'server' | 'reason_code'>;
  private readonly reconciled: Counter<'name' | 'outcome'>;
  readonly #operatorServers: ReadonlySet<string>;

  constructor(options: PrometheusToolMetricsOptions = {}) {
    this.#operatorServers = new Set(options.operatorServers ?? []);
    const registry = new Registry();
    const registers = [registry];
    this.registry = registry;
    this.calls = new Counter({
      name: 'tool_calls_total',
      help: 'Concluded tool calls, by outcome status.',
      labelNames: ['name', 'source', 'outcome_status'],
      registers,
    });
    this.failures = new Counter({
      name: 'tool_failures_total',
      help: 'Tool calls that ended failed, unavailable or uncertain, by reason code.',
      labelNames: ['name', 'source', 'reason_code'],
      registers,
    });
    this.duration = new Histogram({
      name: 'tool_duration_seconds',
      help: 'How long the tool itself ran (pipeline step 10).',
      labelNames: ['name', 'source'],
      buckets: [...TOOL_DURATION_BUCKETS],
      registers,
    });
    this.outputBytes = new Histogram({
      name: 'tool_output_bytes',
      help: 'Size of tool output before truncation.',
      labelNames: ['name', 'source'],
      buckets: [...TOOL_OUTPUT_BYTES_BUCKETS],
      registers,
    });
    this.truncations = new Counter({
      name: 'tool_truncations_total',
      help: 'Tool results truncated or moved to an artifact.',
      labelNames: ['name', 'source'],
      registers,
    });
    this.uncertain = new Counter({
      name: 'tool_uncertain_total',
      help: 'Tool calls that ended UNCERTAIN: each one is a human review.',
      labelNames: ['name', 'source'],
      registers,
    });
    this.mcpRequests = new Counter({
      name: 'mcp_requests_total',
      help: 'MCP JSON-RPC round trips, by method and outcome.',
      labelNames: ['server', 'method', 'outcome'],
      registers,
    });
    this.mcpConnectFailures = new Counter({
      name: 'mcp_connect_failures_total',
      help: 'Failed MCP server connections, by reason code.',
      labelNames: ['server', 'reason_code'],
      registers,
    });
    this.reconciled = new Counter({
      name: 'tool_reconciled_total',
      help: 'Reconciliation attempts on UNCERTAIN calls, by answer (docs/adr/0063).',
      labelNames: ['name', 'outcome'],
      registers,
    });
    if (options.collectDefaultMetrics === true) collectDefaultMetrics({ register: registry });
  }

  /** The Content-Type of `metricsText()` (the Prometheus text exposition format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  recordReconciliation(observation: ReconciliationObservation): void {
    this.reconciled.inc({ name: observation.name, outcome: observation.outcome });
  }

  /** The body of GET /metrics. */
  metricsText(): Promise<string> {
    return this.registry.metrics();
  }

  /** An operator server's id, or TENANT_SERVER_LABEL. */
  #server(serverId: string): string {
    return this.#operatorServers.has(serverId) ? serverId : TENANT_SERVER_LABEL;
  }

  /** `mcp.{server_id}.{tool}` of a tenant server is TENANT_SERVER_LABEL; other names are the platform's. */
  #toolName(name: string, source: ToolCallObservation['source']): string {
    if (source !== 'mcp') return name;
    const serverId = name.split('.')[1];
    return serverId !== undefined && this.#operatorServers.has(serverId) ? name : TENANT_SERVER_LABEL;
  }

  recordToolCall(o: ToolCallObservation): void {
    const tool = { name: this.#toolName(o.name, o.source), source: o.source };
    this.calls.inc({ ...tool, outcome_status: o.outcomeStatus });
    if (FAILURE_STATUSES.has(o.outcomeStatus)) this.failures.inc({ ...tool, reason_code: o.reasonCode });
    if (o.outcomeStatus === 'uncertain') this.uncertain.inc(tool);
    if (o.truncated) this.truncations.inc(tool);
    // A histogram that receives NaN or a negative number is corrupt for good: telemetry drops
    // the sample rather than the call failing or the series breaking.
    if (isMeasurement(o.durationSeconds)) this.duration.observe(tool, o.durationSeconds);
    if (isMeasurement(o.outputBytes)) this.outputBytes.observe(tool, o.outputBytes);
  }

  recordMcpRequest(o: McpRequestObservation): void {
    this.mcpRequests.inc({ server: this.#server(o.server), method: o.method, outcome: o.outcome });
  }

  recordMcpConnectFailure(o: McpConnectFailureObservation): void {
    this.mcpConnectFailures.inc({ server: this.#server(o.server), reason_code: o.reasonCode });
  }
}

function isMeasurement(value: number | null): value is number {
  return value !== null && Number.isFinite(value) && value >= 0;
}
