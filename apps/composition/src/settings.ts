import { resolve } from 'node:path';
import type { TenantStepQuotas } from '@veetbot/domain';
import type { WorkerLoopSettings } from '@veetbot/runtime';
import { API_KEY_PATTERN } from './api-keys';
import { StartupError } from './startup-error';
import { readStepQuotas } from './step-quota-settings';

/** What one process runs: the api, the worker loop, or both (the embedded default). */
export type Role = 'both' | 'api' | 'worker';

/**
 * Every setting of every role, read in one place so that a variable means the same thing in
 * `pnpm start`, `pnpm start:api` and `pnpm start:worker` (ADR 0022).
 */
export interface Settings {
  readonly role: Role;
  /** DATABASE_URL: PostgreSQL; unset: PGlite in `<dataDir>/pglite` (the `both` role only). */
  readonly databaseUrl: string | null;
  /** VEETBOT_DATA_DIR (default ./.veetbot/): PGlite, blobs, workspaces, the outbox, operator.json. */
  readonly dataDir: string;
  /** VEETBOT_PORT (default 8787), on 127.0.0.1: the api. */
  readonly port: number;
  /** VEETBOT_WORKER_PORT (default 8788; 0 picks a free port), on 127.0.0.1: a worker-only process's /metrics, /healthz, /readyz. */
  readonly workerPort: number;
  readonly host: string;
  /** VEETBOT_DEMO_API_KEY: the demo key, fixed instead of generated. */
  readonly demoApiKey: string | null;
  /** VEETBOT_OPERATOR_CONFIG (default `<dataDir>/operator.json`; VEETBOT_CONFIG is the old name). */
  readonly operatorConfigPath: string;
  /** VEETBOT_WORKER_DRAIN_MS (default 20 000): how long SIGTERM waits for in-flight batches. */
  readonly drainMs: number;
  /** VEETBOT_WORKER_CONCURRENCY, VEETBOT_WORKER_POLL_MS, VEETBOT_WORKER_SWEEP_MS. */
  readonly loop: Partial<WorkerLoopSettings>;
  /** VEETBOT_TENANT_STEP_QUOTA, VEETBOT_TENANT_STEP_QUOTAS: steps a tenant may run at once (docs/adr/0070). */
  readonly stepQuotas: TenantStepQuotas;
  /** VEETBOT_LEASE_TTL_MS: the run lease's time to live (the runtime's default when unset). */
  readonly leaseTtlMs: number | undefined;
  /** VEETBOT_APPROVAL_HOLD_SECONDS: how long a program's call waits for its approval before the orchestration suspends (default 300). */
  readonly approvalHoldSeconds: number | undefined;
  /** VEETBOT_BRIDGE_MAXIMUM_CALLS: tool calls one orchestration turn may make (default 64). */
  readonly bridgeMaximumCalls: number | undefined;
  /** VEETBOT_WORKSPACE_MAX_BYTES: a run's workspace cap (docs/adr/0058); at least 1 MiB. */
  readonly workspaceMaximumBytes: number | undefined;
  /** VEETBOT_MAXIMUM_DELEGATION_DEPTH: ancestors a delegated run may have (default 3; docs/adr/0050). */
  readonly maximumDelegationDepth: number | undefined;
  /** VEETBOT_DATABASE_POOL_SIZE: node-postgres pool size (default 10). */
  readonly poolSize: number | undefined;
  /**
   * VEETBOT_METRICS_TOKEN: when set, `/metrics` (the api's and a worker's) answers only a request
   * with `Authorization: Bearer <token>` (docs/adr/0055). At least 16 characters.
   */
  readonly metricsToken: string | null;
  /** VEETBOT_STARTUP_TIMEOUT_MS (default 15 000): the first contact with the database. */
  readonly startupTimeoutMs: number;
  /**
   * VEETBOT_SECRETS_KEY, VEETBOT_SECRETS_KEY_FILE, VEETBOT_SECRETS_PREVIOUS_KEYS (ADR 0017): the
   * tenant-secrets key; none set: `<dataDir>/secrets.key` (generated once), which every role
   * sharing the data folder shares.
   */
  readonly secretsEnv: Readonly<Record<string, string | undefined>>;
  /**
   * VEETBOT_BROWSER_ENABLED=1: the browser tools (docs/adr/0079), chromium inside bubblewrap
   * behind the platform's egress proxy. Off by default. VEETBOT_BROWSER_ALLOW_LOOPBACK=1 (tests
   * only) lets the browser reach loopback; private and metadata addresses stay refused.
   */
  readonly browser: { readonly enabled: boolean; readonly allowLoopback: boolean };
  /**
   * VEETBOT_DEMO_OUTBOX_ACK_MS (0 to 5 000, default 0): how long the demo outbox, the reference
   * external system, takes to answer after it has taken a line. A real system's answer arrives
   * after its effect; this widens that window so a kill test can land in it (docs/adr/0081).
   */
  readonly demoOutboxAckMs: number;
}

export const DEFAULT_PORT = 8787;
export const DEFAULT_WORKER_PORT = 8788;
export const DEFAULT_DRAIN_MS = 20_000;
export const DEFAULT_STARTUP_TIMEOUT_MS = 15_000;
/** Half the demo tool's 10 s timeout: an answer that slow is still an answer. */
export const DEMO_OUTBOX_ACK_MAX_MS = 5_000;

const ROLE_FLAGS: Readonly<Record<string, Role>> = { '--api-only': 'api', '--worker-only': 'worker' };

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Environment and flags, each checked; a bad value is `startup.config_invalid` naming it.
 * `defaultRole` is the role without a flag (`both` for `pnpm start`, `worker` for the worker's
 * own entry point).
 */
export function readSettings(env: Env, argv: readonly string[], cwd: string, defaultRole: Role = 'both'): Settings {
  let role: Role | null = null;
  for (const arg of argv) {
    const named = ROLE_FLAGS[arg];
    if (named === undefined)
      throw new StartupError('startup.config_invalid', `unknown argument ${JSON.stringify(arg)} (known: --api-only, --worker-only)`);
    if (role !== null && role !== named)
      throw new StartupError('startup.config_invalid', '--api-only and --worker-only exclude each other (neither runs both)');
    role = named;
  }
  role ??= defaultRole;
  const nonEmpty = (name: string) => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? null : value;
  };
  const port = portOf(nonEmpty('VEETBOT_PORT'), 'VEETBOT_PORT', DEFAULT_PORT, 1);
  const workerPort = portOf(nonEmpty('VEETBOT_WORKER_PORT'), 'VEETBOT_WORKER_PORT', DEFAULT_WORKER_PORT, 0);
  const demoApiKey = nonEmpty('VEETBOT_DEMO_API_KEY');
  if (demoApiKey !== null && !API_KEY_PATTERN.test(demoApiKey)) {
    throw new StartupError('startup.config_invalid', 'VEETBOT_DEMO_API_KEY must look like vbk_ followed by 16 to 128 of A-Z a-z 0-9 _ -');
  }
  const databaseUrl = nonEmpty('DATABASE_URL');
  if (databaseUrl === null && role === 'worker') {
    throw new StartupError(
      'startup.database_url_required',
      'DATABASE_URL is not set. A separate worker needs PostgreSQL: the embedded PGlite database belongs to one process (run `pnpm start` for api and worker together).',
    );
  }
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new StartupError('startup.config_invalid', 'DATABASE_URL must be a postgres:// URL');
  }
  const dataDir = resolve(cwd, nonEmpty('VEETBOT_DATA_DIR') ?? '.veetbot');
  const configured = nonEmpty('VEETBOT_OPERATOR_CONFIG');
  const legacy = nonEmpty('VEETBOT_CONFIG');
  if (configured !== null && legacy !== null && resolve(cwd, configured) !== resolve(cwd, legacy)) {
    throw new StartupError(
      'startup.config_invalid',
      'VEETBOT_OPERATOR_CONFIG and VEETBOT_CONFIG (its old name) name different files; set only VEETBOT_OPERATOR_CONFIG',
    );
  }
  const metricsToken = nonEmpty('VEETBOT_METRICS_TOKEN');
  if (metricsToken !== null && !/^[\x21-\x7e]{16,512}$/.test(metricsToken)) {
    throw new StartupError('startup.config_invalid', 'VEETBOT_METRICS_TOKEN must be 16 to 512 printable characters without spaces');
  }
  const concurrency = integer(env, 'VEETBOT_WORKER_CONCURRENCY');
  const pollIntervalMs = integer(env, 'VEETBOT_WORKER_POLL_MS');
  const sweepIntervalMs = integer(env, 'VEETBOT_WORKER_SWEEP_MS');
  return {
    role,
    databaseUrl,
    dataDir,
    port,
    workerPort,
    host: '127.0.0.1',
    demoApiKey,
    operatorConfigPath: resolve(cwd, configured ?? legacy ?? resolve(dataDir, 'operator.json')),
    drainMs: integer(env, 'VEETBOT_WORKER_DRAIN_MS', 0) ?? DEFAULT_DRAIN_MS,
    loop: {
      ...(concurrency === undefined ? {} : { concurrency }),
      ...(pollIntervalMs === undefined ? {} : { pollIntervalMs }),
      ...(sweepIntervalMs === undefined ? {} : { sweepIntervalMs }),
    },
    stepQuotas: readStepQuotas(env),
    leaseTtlMs: integer(env, 'VEETBOT_LEASE_TTL_MS'),
    approvalHoldSeconds: integer(env, 'VEETBOT_APPROVAL_HOLD_SECONDS', 0),
    bridgeMaximumCalls: integer(env, 'VEETBOT_BRIDGE_MAXIMUM_CALLS'),
    workspaceMaximumBytes: integer(env, 'VEETBOT_WORKSPACE_MAX_BYTES', 1024 * 1024),
    maximumDelegationDepth: integer(env, 'VEETBOT_MAXIMUM_DELEGATION_DEPTH', 0),
    poolSize: integer(env, 'VEETBOT_DATABASE_POOL_SIZE'),
    metricsToken,
    startupTimeoutMs: integer(env, 'VEETBOT_STARTUP_TIMEOUT_MS') ?? DEFAULT_STARTUP_TIMEOUT_MS,
    browser: { enabled: flag(env, 'VEETBOT_BROWSER_ENABLED'), allowLoopback: flag(env, 'VEETBOT_BROWSER_ALLOW_LOOPBACK') },
    demoOutboxAckMs: boundedInteger(env, 'VEETBOT_DEMO_OUTBOX_ACK_MS', 0, DEMO_OUTBOX_ACK_MAX_MS) ?? 0,
    secretsEnv: {
      VEETBOT_SECRETS_KEY: env.VEETBOT_SECRETS_KEY,
      VEETBOT_SECRETS_KEY_FILE: env.VEETBOT_SECRETS_KEY_FILE,
      VEETBOT_SECRETS_PREVIOUS_KEYS: env.VEETBOT_SECRETS_PREVIOUS_KEYS,
    },
  };
}

function portOf(text: string | null, name: string, fallback: number, minimum: number): number {
  if (text === null) return fallback;
  if (!/^\d{1,5}$/.test(text) || Number(text) < minimum || Number(text) > 65535) {
    throw new StartupError('startup.config_invalid', `${name} must be a port number from ${minimum} to 65535`);
  }
  return Number(text);
}

/** An on/off variable: 1 or true is on; absent, empty, 0 or false is off; anything else is refused. */
function flag(env: Env, name: string): boolean {
  const raw = env[name]?.trim().toLowerCase() ?? '';
  if (raw === '' || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new StartupError('startup.config_invalid', `${name} must be 1 or 0`);
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

/** An optional integer variable within [minimum, maximum]. */
function boundedInteger(env: Env, name: string, minimum: number, maximum: number): number | undefined {
  const value = integer(env, name, minimum);
  if (value !== undefined && value > maximum) {
    throw new StartupError('startup.config_invalid', `${name} must be an integer from ${minimum} to ${maximum} (got "${value}").`);
  }
  return value;
}
