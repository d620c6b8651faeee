import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { createArtifactWriterFactory, FolderBlobStore, FolderWorkspaceProvider } from '@veetbot/blob-store-folder';
import { DefaultCredentialResolver, openCredentialBroker, type LoadedKeyring } from '@veetbot/credential-broker';
import {
  DEFAULT_OPERATOR_SETTINGS,
  DefaultEgressPolicy,
  McpAdapter,
  serverDirectory,
  STRICT_EGRESS,
  type OperatorConfig,
} from '@veetbot/mcp-adapter';
import { DefaultPolicyEngine } from '@veetbot/policy';
import type {
  ApiStores,
  BlobStore,
  Clock,
  CredentialResolver,
  EgressPolicy,
  SandboxAvailability,
  Stores,
  TenantCredentialResolvers,
  TenantToolRegistries,
  WebSearchProvider,
} from '@veetbot/ports';
import { InMemoryToolRegistry } from '@veetbot/registry';
import { ChromiumBrowserProvider } from '@veetbot/browser-provider';
import { BridgeServer, BubblewrapOrchestration, BubblewrapSandbox, WorkspaceFileService } from '@veetbot/sandbox-adapter';
import {
  composeReconcilers,
  controlTools,
  orchestrationTools,
  Runtime,
  WorkerLoop,
  type RuntimeSettings,
  type WorkerLoopEvent,
  type WorkerLoopSettings,
} from '@veetbot/runtime';
import {
  checkReadiness,
  createApiStores,
  createStepQueue,
  createStores,
  type Database,
  type DatabaseReadiness,
  type DatabaseStepQueue,
} from '@veetbot/store-postgres';
import { PrometheusToolMetrics } from '@veetbot/telemetry';
import { createBuiltinReconcilers, createBuiltinTools, type WebFetchLimits } from '@veetbot/tools-builtin';
import { AjvSchemaValidator } from '@veetbot/validation';
import type { TenantStepQuotas } from '@veetbot/domain';
import { withOperatorUrlFetchRules } from './url-fetch-policy';

/** The global output ceiling (§ Output): a spec declaring more is a registration error. */
export const GLOBAL_MAXIMUM_OUTPUT_BYTES = 1024 * 1024;

/** The operator configuration when a caller has none (tests): no servers, strict egress. */
export const EMPTY_OPERATOR_CONFIG: OperatorConfig = {
  servers: [],
  egress: STRICT_EGRESS,
  tenantEgress: STRICT_EGRESS,
  ...DEFAULT_OPERATOR_SETTINGS,
};

export interface ComposeOptions {
  /** Opened and migrated. */
  readonly database: Database;
  /** blobs/, workspaces/ and the demo outbox live here: one folder for every role. */
  readonly dataDir: string;
  /** The operator configuration: its servers, its adapter settings and its two egress policies. */
  readonly operator?: OperatorConfig;
  /** Compose the MCP adapter (default true). */
  readonly mcp?: boolean;
  /**
   * Compose the sandbox (default true; docs/adr/0037): when this host can run one,
   * sandbox.run_command is registered and sessions are offered target kind `sandbox`.
   */
  readonly sandbox?: boolean;
  /**
   * The host user (uid = gid) a root worker's sandbox and bridge run as (default 65534); one
   * value for both, so the turn's socket belongs to the program's user.
   */
  readonly sandboxHostUid?: number;
  /** A run's workspace cap in bytes (docs/adr/0058; VEETBOT_WORKSPACE_MAX_BYTES); default 256 MiB. */
  readonly workspaceMaximumBytes?: number;
  /** Overrides the operator configuration's `tenant_egress` (tests with a scripted resolver). */
  readonly egress?: EgressPolicy;
  /**
   * web.fetch (docs/adr/0078): on by default, every hop under the tenant egress policy (the
   * operator's `mcp.tenant_egress` switches, or `egress` above); `false` leaves the tool out,
   * limits tune its bounded reader. The operator's choice, never a tenant's.
   */
  readonly webFetch?: false | WebFetchLimits;
  /** web.search's provider (docs/adr/0078); without one the tool is not registered. */
  readonly webSearch?: WebSearchProvider;
  /**
   * The browser tools (docs/adr/0079): off unless enabled. The browser's egress is the tenant
   * policy's (`tenant_egress`, or `egress`); allowLoopback is for tests only.
   */
  readonly browser?: { readonly enabled: boolean; readonly allowLoopback?: boolean };
  /** The demo outbox's answer delay in ms after it has taken a line (VEETBOT_DEMO_OUTBOX_ACK_MS; docs/adr/0081). */
  readonly demoOutboxAckMs?: number;
  readonly clock?: Clock;
  /** This process's lease owner id; unique per process. */
  readonly owner?: string;
  readonly runtimeSettings?: Partial<RuntimeSettings>;
  /**
   * Observers of the durable pipeline's steps (tests: hard gate 11 compares the step sequence a
   * call records, whichever face submitted it — docs/adr/0044). None in production.
   */
  readonly pipelineHooks?: NonNullable<ConstructorParameters<typeof Runtime>[0]['hooks']>;
  readonly workerSettings?: Partial<WorkerLoopSettings>;
  /** The operator's per-tenant step quotas (docs/adr/0070), for the claim and the step's opening. Default: none. */
  readonly stepQuotas?: TenantStepQuotas;
  readonly onWorkerEvent?: (event: WorkerLoopEvent) => void;
  /** The step queue's LISTEN connection dropped (it is re-made; polling covers the gap). */
  readonly onListenError?: (error: unknown) => void;
  /**
   * Where the tenant-secrets key comes from (ADR 0017): VEETBOT_SECRETS_KEY / _KEY_FILE /
   * _PREVIOUS_KEYS are read from this; without them, `<dataDir>/secrets.key` (generated once).
   * Default: none of them (the data folder's key).
   */
  readonly secretsEnv?: Readonly<Record<string, string | undefined>>;
  /** The policy profile (default: the shipped one); tests compose a changed policy with it (docs/adr/0047). */
  readonly policyProfile?: unknown;
  /** VEETBOT_METRICS_TOKEN: the bearer token /metrics requires (docs/adr/0055); null or absent: none. */
  readonly metricsToken?: string | null;
}

/**
 * The system, composed once for every role (ADR 0022): what the api serves from and what the
 * worker loop runs, over one database and one data folder.
 */
export interface ComposedSystem {
  readonly stores: Stores;
  readonly apiStores: ApiStores;
  readonly runtime: Runtime;
  readonly queue: DatabaseStepQueue;
  readonly blobs: BlobStore;
  readonly clock: Clock;
  /** The builtins-only registry (every tenant's own registry starts as a copy of it). */
  readonly registry: InMemoryToolRegistry;
  /** One registry per tenant (ADR 0011): builtins plus that tenant's MCP tools. */
  readonly registries: TenantToolRegistries;
  /** The policy every call is evaluated under: the profile and the operator's URL-fetch rules (docs/adr/0052). */
  readonly policy: DefaultPolicyEngine;
  readonly metrics: PrometheusToolMetrics;
  /** The operator's bearer token for /metrics (api and worker), or null: served without one. */
  readonly metricsToken: string | null;
  /** The tenant-secrets keyring in use (where its key came from; never the key). */
  readonly secretKeys: LoadedKeyring;
  readonly mcp: McpAdapter | undefined;
  readonly operator: OperatorConfig;
  /** The tenant servers' policy: checks a tenant URL at write, and at dial. */
  readonly tenantEgress: EgressPolicy;
  /** The session environment this deployment offers. */
  readonly environment: {
    readonly flags: Readonly<Record<string, boolean>>;
    readonly targetKinds: readonly ('in_process' | 'mcp' | 'sandbox' | 'web_provider' | 'browser_provider')[];
  };
  /** Whether the browser tools are registered (docs/adr/0079). */
  readonly browser: boolean;
  /** Whether programs can run in a sandbox here, and if not, what is missing (printed at start). */
  readonly sandbox: SandboxAvailability;
  readiness(): Promise<DatabaseReadiness>;
  /** The worker loop (not started: the role decides). */
  readonly worker: WorkerLoop;
  /** Aborted when close() begins: open SSE streams and step waits end. */
  readonly shutdownSignal: AbortSignal;
  /** Stop the worker (draining), the MCP transports and the queue; the database stays open. */
  close(options?: { drainMs?: number }): Promise<{ readonly drained: boolean; readonly abandoned: number }>;
}

/**
 * The credential brokers: the ONE place they are constructed, for every role (RULINGS.md
 * "Credentials", ADR 0017). `builtins` is ToolExecutionContext.credentials for operator-shipped
 * builtins (env:/file:; none resolves today); `mcp` resolves per tenant and server origin — a
 * tenant's server only that tenant's `secret:NAME`, an operator's only env:/file:.
 */
export async function composeCredentials(
  stores: Stores,
  options: { readonly dataDir: string; readonly secretsEnv?: Readonly<Record<string, string | undefined>> },
): Promise<{ readonly builtins: CredentialResolver; readonly mcp: TenantCredentialResolvers; readonly secretKeys: LoadedKeyring }> {
  const { broker, keys } = await openCredentialBroker({
    env: options.secretsEnv ?? {},
    dataDir: options.dataDir,
    secrets: stores.tenantSecrets,
  });
  return { builtins: new DefaultCredentialResolver({}), mcp: broker, secretKeys: keys };
}

/**
 * The composition root of every process (`pnpm start`, `--api-only`, `--worker-only`,
 * `pnpm start:worker`) and of the tests that compose in process: the real validator, registries
 * (builtins plus each tenant's MCP tools), policy engine, stores, folder blob store and
 * workspaces, credential broker, MCP adapter (with metrics and the operator's settings), step
 * queue, runtime and worker loop over one database. Nothing here is a fake.
 */
export async function composeSystem(options: ComposeOptions): Promise<ComposedSystem> {
  const { database, dataDir } = options;
  const clock = options.clock ?? { now: () => new Date() };
  const operator = options.operator ?? EMPTY_OPERATOR_CONFIG;
  const stores = createStores(database, options.stepQuotas === undefined ? {} : { quotas: options.stepQuotas });
  const apiStores = createApiStores(database);
  const validator = new AjvSchemaValidator();
  // The sandbox (docs/adr/0037): asked once whether it can run here; sandbox.run_command exists
  // only when it can, so no session pins a tool that cannot run.
  // The sandbox and the bridge run as ONE host user (docs/adr/0038, 0039): the turn's socket is
  // owned by the user the program runs as, so both are given the same identity from here.
  const sandboxUser = {
    ...(options.sandboxHostUid === undefined ? {} : { hostUid: options.sandboxHostUid, hostGid: options.sandboxHostUid }),
  };
  // docs/adr/0058: the host touches a run's workspace only through the confined helper (its own
  // mount namespace, the sandbox's host user for a root worker), which also caps each workspace.
  const workspaceRoot = join(dataDir, 'workspaces');
  const workspaceFiles = new WorkspaceFileService({
    workspaceRoot,
    ...sandboxUser,
    ...(options.workspaceMaximumBytes === undefined ? {} : { maximumBytes: options.workspaceMaximumBytes }),
  });
  const sandboxAdapter =
    options.sandbox === false
      ? undefined
      : new BubblewrapSandbox({ stateDir: join(dataDir, 'sandbox'), workspaceRoot, dataDir, workspaceFiles, ...sandboxUser });
  const sandbox: SandboxAvailability =
    sandboxAdapter === undefined ? { available: false, reason: 'not composed (sandbox: false)' } : await sandboxAdapter.availability();
  // § The programmatic orchestration bridge (docs/adr/0039): bridge turns in that sandbox.
  const orchestration =
    sandbox.available && sandboxAdapter !== undefined
      ? new BubblewrapOrchestration({
          sandbox: sandboxAdapter,
          bridge: new BridgeServer(sandboxUser),
          bridgeHostDir: join(dataDir, 'bridge'),
        })
      : undefined;
  // Two policies (ADR 0022): the operator's servers follow `mcp.egress`; tenant servers follow
  // `mcp.tenant_egress`, strict unless the operator relaxes it explicitly.
  const operatorEgress = new DefaultEgressPolicy(operator.egress);
  const tenantEgress = options.egress ?? new DefaultEgressPolicy(operator.tenantEgress);
  // web.fetch is the tenant's agent reaching a URL it names: the tenant policy (docs/adr/0078).
  const webFetch = options.webFetch === false ? undefined : { ...(options.webFetch ?? {}), egress: tenantEgress };
  // The browser tools (docs/adr/0079): only when the operator enables them; every request the
  // browser makes is judged by the tenant egress policy in this process's proxy.
  const browserProvider =
    options.browser?.enabled === true
      ? new ChromiumBrowserProvider({
          egress: tenantEgress,
          allowLoopback: options.browser.allowLoopback === true,
        })
      : undefined;
  // skill.manage writes the tenant skill store skill.load reads (§ Skills; docs/adr/0036).
  const builtins = createBuiltinTools({
    ...(webFetch === undefined ? {} : { webFetch }),
    ...(options.webSearch === undefined ? {} : { webSearch: options.webSearch }),
    ...(browserProvider === undefined ? {} : { browser: browserProvider }),
    outboxPath: join(dataDir, 'outbox.log'),
    ...(options.demoOutboxAckMs === undefined || options.demoOutboxAckMs === 0
      ? {}
      : { afterEffect: () => delay(options.demoOutboxAckMs ?? 0) }),
    clock,
    skills: stores.skills,
    ...(sandbox.available && sandboxAdapter !== undefined ? { sandbox: sandboxAdapter } : {}),
  });
  const newRegistry = () => {
    const fresh = new InMemoryToolRegistry({ validator, globalMaximumOutputBytes: GLOBAL_MAXIMUM_OUTPUT_BYTES, flags: {} });
    // § Control tools: "registered in the same registry" as every builtin (docs/adr/0034).
    // sandbox.run_orchestration exists only where a sandbox can run (docs/adr/0039).
    fresh.registerBuiltins([...builtins, ...controlTools(), ...(orchestration === undefined ? [] : orchestrationTools())]);
    return fresh;
  };
  const registry = newRegistry();
  // One registry per tenant (ADR 0011): two tenants' servers may share a server_id and a tool
  // name, and neither may ever resolve the other's.
  const tenantRegistries = new Map<string, InMemoryToolRegistry>();
  const registries: TenantToolRegistries = {
    forTenant(tenantId) {
      let found = tenantRegistries.get(tenantId);
      if (found === undefined) {
        found = newRegistry();
        tenantRegistries.set(tenantId, found);
      }
      return found;
    },
  };
  // The profile (the shipped one unless a test names another), with the operator's
  // URL-fetching tools refused first unless the operator opted in (docs/adr/0052).
  const profile = (options.policyProfile === undefined ? new DefaultPolicyEngine() : new DefaultPolicyEngine(options.policyProfile))
    .profile;
  const policy = new DefaultPolicyEngine(withOperatorUrlFetchRules(profile, operator));
  const blobs = new FolderBlobStore({ root: join(dataDir, 'blobs') });
  const artifacts = createArtifactWriterFactory({ blobs, artifacts: stores.artifacts, clock });
  const {
    builtins: credentials,
    mcp: mcpCredentials,
    secretKeys,
  } = await composeCredentials(stores, { dataDir, ...(options.secretsEnv === undefined ? {} : { secretsEnv: options.secretsEnv }) });
  const workspaces = new FolderWorkspaceProvider({
    root: workspaceRoot,
    open: (folder) => workspaceFiles.handle(folder),
  });
  // docs/adr/0055: only the operator's server ids are label values; a tenant's are `tenant_server`.
  const metrics = new PrometheusToolMetrics({ operatorServers: operator.servers.map((server) => server.serverId) });

  const mcp =
    options.mcp === false
      ? undefined
      : new McpAdapter({
          servers: serverDirectory({ operator: operator.servers, tenantRows: stores.mcpServers }),
          catalog: stores.mcpCatalog,
          events: stores.events,
          skills: stores.skills,
          credentials: mcpCredentials,
          validator,
          egress: tenantEgress,
          // By origin, which the directory sets from where the configuration was read (never a
          // column a tenant writes): a tenant row with the same URL is still a tenant's.
          egressFor: (config) => (config.origin === 'operator' ? operatorEgress : tenantEgress),
          clock,
          metrics,
          settings: {
            discoveryReuseSeconds: operator.discoveryReuseSeconds,
            warmupConnectTimeoutSeconds: operator.warmupConnectTimeoutSeconds,
            warmupRetrySeconds: operator.warmupRetrySeconds,
            warmupAttempts: operator.warmupAttempts,
            sweepIntervalSeconds: operator.sweepIntervalSeconds,
          },
          // The sweep sees sessions closed, and runs torn down, by other processes (docs/adr/0024).
          sessions: stores.sessions,
        });

  const runtime = new Runtime({
    registry,
    registries,
    validator,
    policy,
    clock,
    stores,
    artifacts,
    credentials,
    owner: options.owner ?? `veetbot-${randomUUID()}`,
    workspaces,
    ...(mcp === undefined ? {} : { mcp }),
    metrics,
    // docs/adr/0063: the sweep settles what a builtin's own record can prove (the same outbox
    // and skills store the tools write), and docs/adr/0066: what an operator MCP server's lookup
    // tool answers; other MCP tools have none and wait for a person.
    reconcilers: composeReconcilers(
      mcp?.lookupReconcilers(),
      createBuiltinReconcilers({ outboxPath: join(dataDir, 'outbox.log'), skills: stores.skills }),
    ),
    ...(orchestration === undefined ? {} : { orchestration }),
    ...(options.runtimeSettings === undefined ? {} : { settings: options.runtimeSettings }),
    ...(options.pipelineHooks === undefined ? {} : { hooks: options.pipelineHooks }),
  });
  const queue = await createStepQueue(database, {
    ...(options.onListenError === undefined ? {} : { onListenError: options.onListenError }),
    ...(options.stepQuotas === undefined ? {} : { quotas: options.stepQuotas }),
  });
  const worker = new WorkerLoop({
    runtime,
    queue,
    clock,
    ...(options.workerSettings === undefined ? {} : { settings: options.workerSettings }),
    ...(options.onWorkerEvent === undefined ? {} : { onEvent: options.onWorkerEvent }),
    // A tenant at its quota is left out of the claim until one of its steps ends (docs/adr/0070).
    claimAfterEveryBatch:
      options.stepQuotas !== undefined && (options.stepQuotas.default !== null || Object.keys(options.stepQuotas.tenants).length > 0),
  });
  const shutdown = new AbortController();
  // Every open SSE stream and step wait listens for the shutdown: as many as there are, not a leak.
  setMaxListeners(0, shutdown.signal);

  let closing: Promise<{ drained: boolean; abandoned: number }> | null = null;
  return {
    stores,
    apiStores,
    runtime,
    queue,
    blobs,
    clock,
    registry,
    registries,
    policy,
    metrics,
    metricsToken: options.metricsToken ?? null,
    secretKeys,
    mcp,
    operator,
    tenantEgress,
    environment: {
      flags: {},
      targetKinds: [
        'in_process',
        ...(mcp === undefined ? [] : ['mcp' as const]),
        ...(sandbox.available ? ['sandbox' as const] : []),
        ...(webFetch === undefined && options.webSearch === undefined ? [] : ['web_provider' as const]),
        ...(browserProvider === undefined ? [] : ['browser_provider' as const]),
      ],
    },
    browser: browserProvider !== undefined,
    sandbox,
    readiness: () => checkReadiness(database),
    worker,
    shutdownSignal: shutdown.signal,
    close: (closeOptions = {}) => {
      closing ??= (async () => {
        shutdown.abort();
        const report = await worker.stop({ drainMs: closeOptions.drainMs ?? 10_000 });
        await mcp?.shutdown().catch(() => undefined);
        await browserProvider?.closeAll().catch(() => undefined);
        await workspaceFiles.close();
        await queue.close();
        return { drained: report.drained, abandoned: report.abandoned };
      })();
      return closing;
    },
  };
}
