import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { VeetbotError } from '@veetbot/domain';
import type { Clock, Stores } from '@veetbot/ports';
import { createArtifactWriterFactory, FolderBlobStore, FolderWorkspaceProvider } from '@veetbot/blob-store-folder';
import { DefaultCredentialBroker, openCredentialBroker } from '@veetbot/credential-broker';
import { DefaultEgressPolicy, loadOperatorConfig, McpAdapter, serverDirectory, type OperatorConfig } from '@veetbot/mcp-adapter';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { ToolRegistryImpl } from '@veetbot/registry';
import { Runtime, WorkerLoop, type WorkerLoopEvent, type WorkerStopReport } from '@veetbot/runtime';
import { checkReadiness, createStepQueue, createStores, migrate, openDatabase, type Database, type DatabaseStepQueue } from '@veetbot/store-postgres';
import { createBuiltinTools } from '@veetbot/tools-builtin';
import { AjvSchemaValidator } from '@veetbot/validation';
import type { WorkerConfig } from './config';
import { StartupError } from './startup-error';

/** The global output ceiling (§ Output: limits): the same value the api and CLI register with. */
export const GLOBAL_MAXIMUM_OUTPUT_BYTES = 1024 * 1024;

/** Where the worker keeps files under its data folder; the api must read artifacts from the same `blobs`. */
export interface WorkerPaths {
  readonly dataDir: string;
  readonly blobs: string;
  readonly workspaces: string;
  /** demo.external_write's outbox (§ the demo tool's one observable effect). */
  readonly outbox: string;
}

export function workerPaths(dataDir: string): WorkerPaths {
  return { dataDir, blobs: join(dataDir, 'blobs'), workspaces: join(dataDir, 'workspaces'), outbox: join(dataDir, 'outbox.log') };
}

export interface WorkerComposition {
  /** This process's lease owner id: `worker-<hostname>-<pid>-<random>`. */
  readonly owner: string;
  readonly database: Database;
  readonly stores: Stores;
  readonly queue: DatabaseStepQueue;
  readonly registry: ToolRegistryImpl;
  readonly runtime: Runtime;
  readonly mcp: McpAdapter;
  /** Not started: `main` starts it; tests may drive the runtime directly instead. */
  readonly loop: WorkerLoop;
  readonly paths: WorkerPaths;
  readonly operator: OperatorConfig | null;
  /**
   * Stop claiming, drain in-flight batches for up to `drainMs` (each releases its run's lease
   * as it ends), close MCP transports, stop listening, close the database. Safe to call twice.
   */
  shutdown(drainMs: number): Promise<WorkerStopReport>;
}

export interface ComposeOptions {
  readonly clock?: Clock;
  readonly owner?: string;
  readonly onEvent?: (event: WorkerLoopEvent) => void;
  /** The LISTEN connection dropped (it is re-made; polling covers the gap). */
  readonly onListenError?: (error: unknown) => void;
}

export function workerOwner(): string {
  return `worker-${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/**
 * The worker's composition root (ARCHITECTURE.md "Processes", production): PostgreSQL at
 * DATABASE_URL, migrations applied, every store, the step queue (LISTEN/NOTIFY), the ajv
 * validator, the registry with the builtins, the default policy engine, the folder blob store
 * and workspaces, the credential broker, the MCP adapter (operator stdio servers from
 * VEETBOT_CONFIG plus each tenant's enabled HTTP servers), the Runtime and the WorkerLoop.
 * Start-up failures are StartupErrors with a code; nothing is left open when one is thrown.
 */
export async function composeWorker(config: WorkerConfig, options: ComposeOptions = {}): Promise<WorkerComposition> {
  const clock: Clock = options.clock ?? { now: () => new Date() };
  const owner = options.owner ?? workerOwner();
  const egress = new DefaultEgressPolicy({});
  // The configuration first: a bad file is reported without touching the database.
  const operator = config.operatorConfigPath === null ? null : loadOperator(config.operatorConfigPath, egress);
  const paths = workerPaths(config.dataDir);

  const database = await openDatabase({ url: config.databaseUrl, poolSize: config.poolSize });
  const cleanup: (() => Promise<void>)[] = [() => database.close()];
  try {
    await reach(database, config);
    try {
      await migrate(database);
    } catch (cause) {
      throw new StartupError('startup.migration_failed', `Applying migrations failed (${codeOf(cause)}).`, { cause });
    }
    await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
    const stores = createStores(database);
    const queue = await createStepQueue(database, options.onListenError === undefined ? {} : { onListenError: options.onListenError });
    cleanup.unshift(() => queue.close());

    const validator = new AjvSchemaValidator();
    const registry = new ToolRegistryImpl({ validator, globalMaximumOutputBytes: GLOBAL_MAXIMUM_OUTPUT_BYTES, flags: {} });
    registry.registerBuiltins(createBuiltinTools({ outboxPath: paths.outbox, clock }));
    // ToolExecutionContext.credentials, for operator-shipped builtins only (none resolves today).
    const credentials = new DefaultCredentialBroker();
    // ADR 0017: MCP connections resolve per tenant and server origin, never process-wide.
    const mcpCredentials = await openCredentialBroker({ env: config.secretsEnv ?? {}, dataDir: config.dataDir, secrets: stores.tenantSecrets }).catch((cause: unknown) => {
      throw new StartupError('startup.config_invalid', VeetbotError.isInstance(cause) ? cause.message : String(cause), { cause });
    });
    const mcp = new McpAdapter({
      servers: serverDirectory({ operator: operator?.servers ?? [], tenantRows: stores.mcpServers }),
      catalog: stores.mcpCatalog,
      events: stores.events,
      skills: stores.skills,
      credentials: mcpCredentials.broker,
      validator,
      egress,
      clock,
      ...(operator === null
        ? {}
        : {
            settings: {
              discoveryReuseSeconds: operator.discoveryReuseSeconds,
              warmupConnectTimeoutSeconds: operator.warmupConnectTimeoutSeconds,
              warmupRetrySeconds: operator.warmupRetrySeconds,
              warmupAttempts: operator.warmupAttempts,
            },
          }),
    });
    cleanup.unshift(() => mcp.shutdown());

    const runtime = new Runtime({
      registry,
      validator,
      policy: new DefaultPolicyEngine(),
      clock,
      stores,
      artifacts: createArtifactWriterFactory({ blobs: new FolderBlobStore({ root: paths.blobs }), artifacts: stores.artifacts, clock }),
      credentials,
      owner,
      workspaces: new FolderWorkspaceProvider({ root: paths.workspaces }),
      mcp,
      ...(config.leaseTtlMs === undefined ? {} : { settings: { leaseTtlMs: config.leaseTtlMs } }),
    });
    const loop = new WorkerLoop({
      runtime,
      stores,
      queue,
      clock,
      settings: config.loop,
      ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    });

    let stopped: Promise<WorkerStopReport> | null = null;
    const shutdown = async (drainMs: number): Promise<WorkerStopReport> => {
      const report = await loop.stop({ drainMs });
      for (const close of cleanup) await close().catch(() => undefined);
      return report;
    };
    return {
      owner,
      database,
      stores,
      queue,
      registry,
      runtime,
      mcp,
      loop,
      paths,
      operator,
      shutdown: (drainMs) => (stopped ??= shutdown(drainMs)),
    };
  } catch (error) {
    for (const close of cleanup) await close().catch(() => undefined);
    throw error;
  }
}

function loadOperator(path: string, egress: DefaultEgressPolicy): OperatorConfig {
  try {
    return loadOperatorConfig(path, { egress });
  } catch (cause) {
    const detail = VeetbotError.isInstance(cause) ? cause.message : String(cause);
    throw new StartupError('startup.config_invalid', `VEETBOT_CONFIG: ${detail}`, { cause });
  }
}

/** The first contact, bounded: a database that never answers is a start-up error, not a hang. */
async function reach(database: Database, config: WorkerConfig): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), config.startupTimeoutMs)));
  const answer = await Promise.race([checkReadiness(database).then((r) => (r.reachable ? 'ok' : 'unreachable')), timeout]);
  clearTimeout(timer);
  if (answer !== 'ok') {
    const how = answer === 'timeout' ? `did not answer within ${config.startupTimeoutMs} ms` : 'could not be reached';
    throw new StartupError('startup.database_unreachable', `The database at ${redact(config.databaseUrl)} ${how}.`);
  }
}

/** The URL without its password, for an error message. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unparsable DATABASE_URL)';
  }
}

function codeOf(error: unknown): string {
  return VeetbotError.isInstance(error) ? error.code : 'unknown';
}
