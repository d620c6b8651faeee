import type { Principal } from '@veetbot/domain';
import type { SecretKeyring } from '@veetbot/credential-broker';
import type { McpServerConfig } from '@veetbot/mcp-adapter';
import type {
  ApiStores,
  BlobStore,
  Clock,
  EgressPolicy,
  EventFeed,
  McpClientPort,
  RuntimeEnvironment,
  StepQueue,
  Stores,
} from '@veetbot/ports';
import type { McpGatewaySettings } from '@veetbot/mcp-gateway';
import type { Runtime } from '@veetbot/runtime';
import type { ApiKeyCache } from './api-key-cache';

/** What /readyz reports (store-postgres checkReadiness has this shape). */
export interface ReadinessReport {
  readonly reachable: boolean;
  readonly migrationsApplied: number;
  readonly migrationsExpected: number;
  readonly ready: boolean;
}

/** The Prometheus registry behind /metrics (PrometheusToolMetrics has this shape). */
export interface MetricsSource {
  readonly contentType: string;
  metricsText(): Promise<string>;
}

export interface ApiSettings {
  /** Largest request body, in bytes (1 MiB). */
  readonly bodyLimitBytes: number;
  /** A step submission's wait when it names none. */
  readonly defaultWaitSeconds: number;
  /** Between re-reads of a step's rows while waiting (the fallback when a wake-up is missed). */
  readonly stepPollMs: number;
  /**
   * Between reads of the event table while an SSE stream is live, when the app has no event feed
   * (`ApiDeps.events`). With one (every composed process), a stream reads when it is woken, and
   * the feed's fallback check covers a lost notification (docs/adr/0054).
   */
  readonly eventPollMs: number;
  /**
   * Open SSE streams one tenant may hold in this process (VEETBOT_EVENT_STREAMS_PER_TENANT,
   * default 16): the next is 429 `events.streams_exhausted` until one closes (docs/adr/0054).
   */
  readonly eventStreamsPerTenant: number;
  /** An SSE comment line at least this often, so proxies keep the connection. */
  readonly heartbeatMs: number;
  /** The MCP gateway face at /mcp (docs/adr/0044): host/origin allowlists, waits, session caps. */
  readonly mcp: Partial<McpGatewaySettings>;
}

export const DEFAULT_API_SETTINGS: ApiSettings = {
  bodyLimitBytes: 1024 * 1024,
  defaultWaitSeconds: 10,
  stepPollMs: 500,
  eventPollMs: 250,
  eventStreamsPerTenant: 16,
  heartbeatMs: 15_000,
  mcp: {},
};

/**
 * Everything the Hono app is built from, injected (the app never opens a database or reads the
 * environment): tests build it over PGlite and call `app.request(...)` in process.
 */
export interface ApiDeps {
  readonly stores: Stores;
  /**
   * The process's cache of checked keys, forgotten on the database's notice of a change
   * (docs/adr/0075). Absent: every request reads api_keys.
   */
  readonly apiKeyCache?: ApiKeyCache;
  readonly apiStores: ApiStores;
  readonly runtime: Pick<Runtime, 'openSessionWithReport' | 'createRun' | 'cancelRun' | 'answerQuestion' | 'completeRun'>;
  readonly queue: Pick<StepQueue, 'notify' | 'waitForStep'>;
  /** What wakes live SSE streams: the process's one listener (docs/adr/0054). Absent: each stream polls. */
  readonly events?: EventFeed;
  readonly blobs: BlobStore;
  readonly clock: Clock;
  /** The session environment: deployment flags and the target kinds this deployment runs. */
  readonly environment: Pick<RuntimeEnvironment, 'flags' | 'targetKinds'>;
  /** Validates tenant MCP server URLs at write (the same policy that checks them when dialled). */
  readonly egress: EgressPolicy;
  /** The operator's (stdio) servers, from the operator configuration file. */
  readonly operatorServers: readonly McpServerConfig[];
  /** Seals tenant secrets on PUT /v1/secrets/{name} (ADR 0017); the broker opens them. */
  readonly secretKeyring: SecretKeyring;
  readonly mcp?: McpClientPort;
  readonly readiness: () => Promise<ReadinessReport>;
  readonly metrics?: MetricsSource;
  /** VEETBOT_METRICS_TOKEN (docs/adr/0055): /metrics needs it as a bearer token; absent or null: none. */
  readonly metricsToken?: string | null;
  readonly settings?: Partial<ApiSettings>;
  /** Where an unexpected error is reported (the response says only `internal`). */
  readonly logError?: (error: unknown, context: { readonly method: string; readonly path: string }) => void;
  /** Aborted at shutdown: open SSE streams and step waits end. */
  readonly shutdownSignal?: AbortSignal;
}

export interface ApiEnv {
  Variables: {
    principal: Principal;
  };
}
