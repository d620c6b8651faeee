import { resolve } from 'node:path';
import type { WorkerLoopSettings } from '@veetbot/runtime';
import { StartupError } from './startup-error';

/** Everything the worker reads from its environment, checked once at start. */
export interface WorkerConfig {
  /** DATABASE_URL: required. PGlite is one process, so a separate worker needs PostgreSQL. */
  readonly databaseUrl: string;
  /** VEETBOT_DATA_DIR (default ./.veetbot): blobs/, workspaces/ and outbox.log live here. */
  readonly dataDir: string;
  /** VEETBOT_CONFIG: the operator configuration (stdio MCP servers live there and only there). */
  readonly operatorConfigPath: string | null;
  /** VEETBOT_WORKER_DRAIN_MS (default 20 000): how long SIGTERM waits for in-flight batches. */
  readonly drainMs: number;
  /** VEETBOT_WORKER_CONCURRENCY, VEETBOT_WORKER_POLL_MS, VEETBOT_WORKER_SWEEP_MS. */
  readonly loop: Partial<WorkerLoopSettings>;
  /** VEETBOT_LEASE_TTL_MS: the run lease's time to live (the runtime's default when unset). */
  readonly leaseTtlMs: number | undefined;
  /** VEETBOT_DATABASE_POOL_SIZE: node-postgres pool size (default 10). */
  readonly poolSize: number | undefined;
  /** VEETBOT_STARTUP_TIMEOUT_MS (default 15 000): the first contact with the database. */
  readonly startupTimeoutMs: number;
  /**
   * VEETBOT_SECRETS_KEY, VEETBOT_SECRETS_KEY_FILE, VEETBOT_SECRETS_PREVIOUS_KEYS (ADR 0017):
   * the tenant-secrets key; none set: `<dataDir>/secrets.key`, which the api shares.
   */
  readonly secretsEnv?: Readonly<Record<string, string | undefined>>;
}

export const DEFAULT_DRAIN_MS = 20_000;
export const DEFAULT_STARTUP_TIMEOUT_MS = 15_000;

type Env = Readonly<Record<string, string | undefined>>;

export function readWorkerConfig(env: Env, cwd: string = process.cwd()): WorkerConfig {
  const databaseUrl = env['DATABASE_URL']?.trim();
  if (!databaseUrl) {
    throw new StartupError(
      'startup.database_url_required',
      'DATABASE_URL is not set. A separate worker needs PostgreSQL: the embedded PGlite database belongs to one process (run `pnpm start` for api and worker together).',
    );
  }
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new StartupError('startup.config_invalid', 'DATABASE_URL must be a postgres:// URL.');
  }
  const operatorConfigPath = env['VEETBOT_CONFIG']?.trim() || null;
  const concurrency = integer(env, 'VEETBOT_WORKER_CONCURRENCY');
  const pollIntervalMs = integer(env, 'VEETBOT_WORKER_POLL_MS');
  const sweepIntervalMs = integer(env, 'VEETBOT_WORKER_SWEEP_MS');
  return {
    databaseUrl,
    dataDir: resolve(cwd, env['VEETBOT_DATA_DIR']?.trim() || '.veetbot'),
    operatorConfigPath: operatorConfigPath === null ? null : resolve(cwd, operatorConfigPath),
    drainMs: integer(env, 'VEETBOT_WORKER_DRAIN_MS', 0) ?? DEFAULT_DRAIN_MS,
    loop: {
      ...(concurrency === undefined ? {} : { concurrency }),
      ...(pollIntervalMs === undefined ? {} : { pollIntervalMs }),
      ...(sweepIntervalMs === undefined ? {} : { sweepIntervalMs }),
    },
    leaseTtlMs: integer(env, 'VEETBOT_LEASE_TTL_MS'),
    poolSize: integer(env, 'VEETBOT_DATABASE_POOL_SIZE'),
    startupTimeoutMs: integer(env, 'VEETBOT_STARTUP_TIMEOUT_MS') ?? DEFAULT_STARTUP_TIMEOUT_MS,
    secretsEnv: {
      VEETBOT_SECRETS_KEY: env['VEETBOT_SECRETS_KEY'],
      VEETBOT_SECRETS_KEY_FILE: env['VEETBOT_SECRETS_KEY_FILE'],
      VEETBOT_SECRETS_PREVIOUS_KEYS: env['VEETBOT_SECRETS_PREVIOUS_KEYS'],
    },
  };
}

/** An optional integer variable: absent is undefined; anything but an integer >= minimum is refused. */
function integer(env: Env, name: string, minimum = 1): number | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < minimum) {
    throw new StartupError('startup.config_invalid', `${name} must be an integer of at least ${minimum} (got "${raw}").`);
  }
  return value;
}
