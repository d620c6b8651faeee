import type {
  EgressPolicy,
  EventStore,
  McpCatalogStore,
  McpDelegatedAuthorization,
  McpElicitation,
  SchemaValidator,
  SessionStore,
  SkillStore,
  TenantCredentialResolvers,
  ToolMetrics,
} from '@veetbot/ports';
import type { ConfiguredServer, McpServerDirectory } from '../config/server-directory';
import { DEFAULT_OPERATOR_SETTINGS } from '../config/operator-config';
import { DEFAULT_MAX_LINE_BYTES, DEFAULT_STDERR_MAX_BYTES } from '../transport/stdio-server-transport';

export interface McpAdapterSettings {
  /** ADR-0131: connection, initialization and discovery share these across sessions. */
  readonly preparationSlots: number;
  /** ADR-0131: stdio startups also share these; a startup takes its process slot first. */
  readonly stdioStartupSlots: number;
  /** How long a tenant HTTP server's live discovery may be pinned again (stdio: the process lifetime). */
  readonly discoveryReuseSeconds: number;
  readonly warmupConnectTimeoutSeconds: number;
  readonly warmupRetrySeconds: number;
  readonly warmupAttempts: number;
  /**
   * § "Each API and worker process checks its own connections at most every thirty seconds (or
   * the configured idle timeout, if shorter)": the sweep's longest interval, at most 30.
   */
  readonly sweepIntervalSeconds: number;
  readonly stderrMaxBytes: number;
  readonly maxLineBytes: number;
}

export const DEFAULT_ADAPTER_SETTINGS: McpAdapterSettings = {
  preparationSlots: 8,
  stdioStartupSlots: 2,
  ...DEFAULT_OPERATOR_SETTINGS,
  sweepIntervalSeconds: 30,
  stderrMaxBytes: DEFAULT_STDERR_MAX_BYTES,
  maxLineBytes: DEFAULT_MAX_LINE_BYTES,
};

export interface McpAdapterDeps {
  /** Operator servers plus the tenant's enabled HTTP rows, each with its origin (serverDirectory). */
  readonly servers: McpServerDirectory;
  readonly catalog: McpCatalogStore;
  readonly events: EventStore;
  /** Prompts become skills when present. */
  readonly skills?: SkillStore;
  /**
   * ADR 0017: asked per connection with the tenant and the server's origin — a tenant's server
   * resolves only that tenant's secret:NAME, an operator's only env:/file:.
   */
  readonly credentials: TenantCredentialResolvers;
  readonly validator: SchemaValidator;
  readonly egress: EgressPolicy;
  /**
   * The egress policy of one server when servers differ: the operator's own servers follow the
   * operator configuration's `egress` section, tenant servers stay on `egress` (ADR 0022).
   * Absent: `egress` for every server.
   */
  readonly egressFor?: (config: ConfiguredServer) => EgressPolicy;
  readonly clock: { now(): Date };
  readonly settings?: Partial<McpAdapterSettings>;
  /**
   * § Spans and metrics: `mcp_requests_total` per JSON-RPC round trip and
   * `mcp_connect_failures_total` per failed connection attempt. Absent: nothing is counted
   * (spans still go to whatever tracer provider is registered).
   */
  readonly metrics?: ToolMetrics;
  /**
   * § "The same sweep observes durable session closure or deletion by another process": the
   * sweep reads what became of the sessions this process holds, in one statement (docs/adr/0024).
   * Absent: the sweep closes idle connections only.
   */
  readonly sessions?: Pick<SessionStore, 'lifecycle'>;
  /**
   * docs/adr/0060: who answers a server's form elicitation during a call (the run's question in
   * the worker, the operator's flag in `mcp check`). Absent: elicitation is not advertised and a
   * server's request is refused at negotiation.
   */
  readonly elicitation?: McpElicitation;
  /**
   * docs/adr/0077: the platform's side of delegated authorization (the authorization code
   * grant): redirect URI, client metadata document, token store and the user agent. Absent: a
   * server that needs a person's consent fails tool.auth_unsupported, as before.
   */
  readonly delegatedAuthorization?: McpDelegatedAuthorization;
}
