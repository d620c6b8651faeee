import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createArtifactWriterFactory, FolderBlobStore, FolderWorkspaceProvider } from '@veetbot/blob-store-folder';
import { DefaultCredentialBroker, openCredentialBroker, type LoadedKeyring } from '@veetbot/credential-broker';
import { DefaultEgressPolicy, McpAdapter, serverDirectory, type McpServerConfig } from '@veetbot/mcp-adapter';
import { DefaultPolicyEngine } from '@veetbot/policy';
import type { Clock, EgressPolicy, Stores, TenantToolRegistries } from '@veetbot/ports';
import { ToolRegistryImpl } from '@veetbot/registry';
import { Runtime, WorkerLoop, type RuntimeSettings, type WorkerLoopEvent, type WorkerLoopSettings } from '@veetbot/runtime';
import { checkReadiness, createApiStores, createStepQueue, createStores, type Database, type DatabaseStepQueue } from '@veetbot/store-postgres';
import { PrometheusToolMetrics } from '@veetbot/telemetry';
import { createBuiltinTools } from '@veetbot/tools-builtin';
import { AjvSchemaValidator } from '@veetbot/validation';
import type { ApiDeps, ApiSettings } from './deps';

/** The global output ceiling (§ Output): a spec declaring more is a registration error. */
export const GLOBAL_MAXIMUM_OUTPUT_BYTES = 1024 * 1024;

export interface ComposeOptions {
  /** Opened and migrated. */
  readonly database: Database;
  /** blobs/, workspaces/ and the demo outbox live here. */
  readonly dataDir: string;
  /** The operator configuration's servers (stdio lives here and only here). */
  readonly operatorServers?: readonly McpServerConfig[];
  /** Compose the MCP adapter (default true). */
  readonly mcp?: boolean;
  readonly egress?: EgressPolicy;
  readonly clock?: Clock;
  /** This process's lease owner id; unique per process. */
  readonly owner?: string;
  readonly runtimeSettings?: Partial<RuntimeSettings>;
  readonly workerSettings?: Partial<WorkerLoopSettings>;
  readonly apiSettings?: Partial<ApiSettings>;
  readonly onWorkerEvent?: (event: WorkerLoopEvent) => void;
  readonly logError?: ApiDeps['logError'];
  /**
   * Where the tenant-secrets key comes from (ADR 0017): VEETBOT_SECRETS_KEY / _KEY_FILE /
   * _PREVIOUS_KEYS are read from this; without them, `<dataDir>/secrets.key` (generated once).
   * Default: none of them (the data folder's key).
   */
  readonly secretsEnv?: Readonly<Record<string, string | undefined>>;
}

export interface ComposedSystem {
  readonly deps: ApiDeps;
  readonly stores: Stores;
  readonly runtime: Runtime;
  readonly queue: DatabaseStepQueue;
  /** The builtins-only registry (every tenant's own registry starts as a copy of it). */
  readonly registry: ToolRegistryImpl;
  readonly registries: TenantToolRegistries;
  readonly metrics: PrometheusToolMetrics;
  /** The tenant-secrets keyring in use (where its key came from; never the key). */
  readonly secretKeys: LoadedKeyring;
  /** The in-process worker (embedded mode); started by the caller, never by compose. */
  readonly worker: WorkerLoop;
  /** Stop the worker (draining), the MCP transports and the queue; the database stays open. */
  close(options?: { drainMs?: number }): Promise<void>;
}

/**
 * The composition root shared by `pnpm start` and the api's tests: the real validator,
 * registry (builtins), policy engine, stores, folder blob store and workspaces, credential
 * broker, MCP adapter, step queue and runtime, over one database. Nothing here is a fake.
 */
export async function composeSystem(options: ComposeOptions): Promise<ComposedSystem> {
  const { database, dataDir } = options;
  const clock = options.clock ?? { now: () => new Date() };
  const stores = createStores(database);
  const apiStores = createApiStores(database);
  const validator = new AjvSchemaValidator();
  const builtins = createBuiltinTools({ outboxPath: join(dataDir, 'outbox.log'), clock });
  const newRegistry = () => {
    const fresh = new ToolRegistryImpl({ validator, globalMaximumOutputBytes: GLOBAL_MAXIMUM_OUTPUT_BYTES, flags: {} });
    fresh.registerBuiltins(builtins);
    return fresh;
  };
  const registry = newRegistry();
  // One registry per tenant (builtins plus that tenant's MCP tools): two tenants' servers may
  // share a server_id and a tool name, and neither may ever resolve the other's.
  const tenantRegistries = new Map<string, ToolRegistryImpl>();
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
  const policy = new DefaultPolicyEngine();
  const blobs = new FolderBlobStore({ root: join(dataDir, 'blobs') });
  const artifacts = createArtifactWriterFactory({ blobs, artifacts: stores.artifacts, clock });
  // ToolExecutionContext.credentials, for operator-shipped builtins only (none resolves today).
  const credentials = new DefaultCredentialBroker({});
  // ADR 0017: MCP connections resolve per tenant and server origin, never process-wide.
  const { broker: mcpCredentials, keys: secretKeys } = await openCredentialBroker({ env: options.secretsEnv ?? {}, dataDir, secrets: stores.tenantSecrets });
  const workspaces = new FolderWorkspaceProvider({ root: join(dataDir, 'workspaces') });
  const egress = options.egress ?? new DefaultEgressPolicy({});
  const operatorServers = options.operatorServers ?? [];
  const metrics = new PrometheusToolMetrics();

  const mcp =
    options.mcp === false
      ? undefined
      : new McpAdapter({
          // Operator servers for every tenant, plus the tenant's own enabled HTTP rows.
          servers: serverDirectory({ operator: operatorServers, tenantRows: stores.mcpServers }),
          catalog: stores.mcpCatalog,
          events: stores.events,
          skills: stores.skills,
          credentials: mcpCredentials,
          validator,
          egress,
          clock,
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
    ...(options.runtimeSettings === undefined ? {} : { settings: options.runtimeSettings }),
  });
  const queue = await createStepQueue(database);
  const worker = new WorkerLoop({
    runtime,
    stores,
    queue,
    clock,
    ...(options.workerSettings === undefined ? {} : { settings: options.workerSettings }),
    ...(options.onWorkerEvent === undefined ? {} : { onEvent: options.onWorkerEvent }),
  });
  const shutdown = new AbortController();

  const deps: ApiDeps = {
    stores,
    apiStores,
    runtime,
    queue,
    blobs,
    clock,
    environment: { flags: {}, targetKinds: mcp === undefined ? ['in_process'] : ['in_process', 'mcp'] },
    egress,
    operatorServers,
    secretKeyring: secretKeys.keyring,
    ...(mcp === undefined ? {} : { mcp }),
    readiness: () => checkReadiness(database),
    metrics,
    ...(options.apiSettings === undefined ? {} : { settings: options.apiSettings }),
    ...(options.logError === undefined ? {} : { logError: options.logError }),
    shutdownSignal: shutdown.signal,
  };

  let closing: Promise<void> | null = null;
  return {
    deps,
    stores,
    runtime,
    queue,
    registry,
    registries,
    metrics,
    secretKeys,
    worker,
    close: (closeOptions = {}) => {
      closing ??= (async () => {
        shutdown.abort();
        await worker.stop({ drainMs: closeOptions.drainMs ?? 10_000 });
        await mcp?.shutdown().catch(() => undefined);
        await queue.close();
      })();
      return closing;
    },
  };
}

