import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { VeetbotError } from '@veetbot/domain';
import { startTracingFromEnv, type Log, type Telemetry } from '@veetbot/telemetry';
import type { Database } from '@veetbot/store-postgres';
import { composeSystem, type ComposedSystem } from './compose';
import { repairDataFolder, usePrivateUmask } from './data-folder';
import { databaseLabel, openAndMigrate } from './database';
import { DEMO_TENANT_ID, ensureDemoTenant, type DemoKey } from './demo-tenant';
import { operationsListener } from './operations';
import { prepareOperatorConfig } from './operator-config';
import { readSettings, type Role, type Settings } from './settings';
import { StartupError, startupErrorLine } from './startup-error';
import { logEvent } from './worker-log';
import { processLog, tracingLine } from './process-log';

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

export interface RunOptions {
  /** The role without a flag: `both` for `pnpm start`, `worker` for the worker's entry point. */
  readonly defaultRole: Role;
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /**
   * The api's request listener over the composed system (apps/api supplies it: the HTTP surface
   * is the api's, the composition is shared). Absent: this entry point cannot run the api role.
   */
  readonly api?: (system: ComposedSystem, logError: (error: unknown, where: { method: string; path: string }) => void) => RequestListener;
  /** Default: the process's structured log (docs/adr/0069), JSON lines or pretty on a terminal. */
  readonly log?: Log;
}

const ROLE_LABEL: Readonly<Record<Role, string>> = { both: 'api and worker', api: 'api only (--api-only)', worker: 'worker only' };
/** service.name of each role's spans (OTEL_SERVICE_NAME, when set, wins). */
const SERVICE_NAME: Readonly<Record<Role, string>> = { both: 'veetbot', api: 'veetbot-api', worker: 'veetbot-worker' };

/**
 * One process of the deployment, in any role (ADR 0022): `pnpm start` (both), `pnpm start:api`
 * (`--api-only`), `pnpm start:worker` (the worker). The same settings mean the same thing in
 * every role; every step of start-up is printed as it begins (a first start on PGlite takes
 * seconds); a failure is one line `error <code>: <message>` and exit 1. SIGTERM/SIGINT: stop
 * accepting, drain in-flight batches (VEETBOT_WORKER_DRAIN_MS), exit 0; a drain that timed out
 * exits 1, and so does a second signal.
 */
export async function runVeetbot(options: RunOptions): Promise<void> {
  const sink = options.log ?? (await processLog(options));
  try {
    await start(options, sink);
  } catch (error) {
    sink.error(startupErrorLine(error), { code: error instanceof StartupError ? error.code : 'startup.failed' });
    sink.flush();
    process.exit(1);
  }
}

async function start(options: RunOptions, sink: Log): Promise<void> {
  // docs/adr/0054: before anything is created, whatever umask this process inherited.
  usePrivateUmask();
  const settings = readSettings(options.env, options.argv, options.cwd, options.defaultRole);
  const runsApi = settings.role !== 'worker';
  const runsWorker = settings.role !== 'api';
  if (runsApi && options.api === undefined)
    throw new StartupError(
      'startup.config_invalid',
      'this entry point runs the worker only (use `pnpm start` or `pnpm start:api` for the api)',
    );
  const owner = `${runsApi ? 'veetbot' : 'worker'}-${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;

  const state: State = {
    system: null,
    database: null,
    telemetry: null,
    stopping: false,
    servers: [],
  };
  installSignals(settings, state, sink);

  sink.info(`veetbot starting: ${ROLE_LABEL[settings.role]}`);
  // docs/adr/0068: tracing from the standard OpenTelemetry environment, off when it names no
  // endpoint (nothing of the SDK is then loaded, docs/adr/0048); flushed on a drained stop.
  state.telemetry = await startTracingFromEnv({ serviceName: SERVICE_NAME[settings.role], env: options.env });
  sink.info(tracingLine(state.telemetry, options.env));
  try {
    mkdirSync(settings.dataDir, { recursive: true, mode: 0o700 });
  } catch (cause) {
    throw new StartupError(
      'startup.config_invalid',
      `VEETBOT_DATA_DIR ${settings.dataDir} cannot be created (${(cause as NodeJS.ErrnoException).code ?? 'error'})`,
      { cause },
    );
  }
  const repair = repairDataFolder(settings.dataDir);
  if (repair.repaired > 0)
    sink.info(
      `  data folder: ${repair.repaired} entr${repair.repaired === 1 ? 'y' : 'ies'} made private (group/other write removed, and read on files)`,
    );
  if (repair.failed.length > 0)
    sink.error(
      `data folder: ${repair.failed.length} entr${repair.failed.length === 1 ? 'y' : 'ies'} could not be made private (not this user's?), e.g. ${repair.failed[0]}`,
    );
  const operator = prepareOperatorConfig(settings.operatorConfigPath);
  const serverIds = operator.config.servers.map((s) => s.serverId);
  sink.info(
    `  operator configuration: ${settings.operatorConfigPath}${operator.written ? ' (example written)' : ''}; MCP servers: ${serverIds.length === 0 ? 'none' : serverIds.join(', ')}`,
  );
  for (const warning of operator.warnings) sink.error(`  warning: ${warning}`);

  // The port first: a port in use fails in a second, before any database work.
  let handler: RequestListener | null = null;
  if (runsApi) {
    state.servers.push(
      await listen(settings, settings.port, 'VEETBOT_PORT', (req, res) => {
        if (handler !== null) return handler(req, res);
        res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' });
        res.end(JSON.stringify({ error: { code: 'service.starting', message: 'The service is starting.' } }));
      }),
    );
  }
  let workerPort: number | null = null;
  if (settings.role === 'worker') {
    const server = await listen(
      settings,
      settings.workerPort,
      'VEETBOT_WORKER_PORT',
      operationsListener(() => state.system, settings.metricsToken),
    );
    state.servers.push(server);
    workerPort = (server.address() as AddressInfo).port;
  }

  sink.info(`  database: ${databaseLabel(settings)}: opening and applying migrations…`);
  const database = await openAndMigrate(settings);
  state.database = database;
  sink.info('  database: ready (every migration applied)');

  const system = await composeSecrets(() =>
    composeSystem({
      database,
      dataDir: settings.dataDir,
      secretsEnv: settings.secretsEnv,
      operator: operator.config,
      owner,
      workerSettings: settings.loop,
      stepQuotas: settings.stepQuotas,
      ...(settings.workspaceMaximumBytes === undefined ? {} : { workspaceMaximumBytes: settings.workspaceMaximumBytes }),
      metricsToken: settings.metricsToken,
      browser: settings.browser,
      demoOutboxAckMs: settings.demoOutboxAckMs,
      runtimeSettings: {
        ...(settings.leaseTtlMs === undefined ? {} : { leaseTtlMs: settings.leaseTtlMs }),
        ...(settings.approvalHoldSeconds === undefined ? {} : { approvalHoldSeconds: settings.approvalHoldSeconds }),
        ...(settings.bridgeMaximumCalls === undefined ? {} : { bridgeMaximumCalls: settings.bridgeMaximumCalls }),
        ...(settings.maximumDelegationDepth === undefined ? {} : { maximumDelegationDepth: settings.maximumDelegationDepth }),
      },
      onWorkerEvent: (event) => logEvent(sink, event),
      onListenError: (error) =>
        sink.error(
          `listen connection lost code=${VeetbotError.isInstance(error) ? error.code : 'unknown'} (reconnecting; polling meanwhile)`,
        ),
    }),
  );
  state.system = system;
  sink.info(`  tenant secrets key: ${secretKeySource(system)}`);
  // docs/adr/0037: say plainly whether programs can run, and what is missing if not.
  sink.info(
    system.sandbox.available
      ? '  sandbox: bubblewrap ready (sandbox.run_command registered)'
      : `  sandbox: unavailable, sandbox.run_command not registered: ${system.sandbox.reason}`,
  );
  sink.info(
    system.browser
      ? `  browser: chromium in bubblewrap behind the egress proxy (browser.* registered${settings.browser.allowLoopback ? '; LOOPBACK ALLOWED, tests only' : ''})`
      : '  browser: off (VEETBOT_BROWSER_ENABLED=1 registers the browser.* tools)',
  );

  let demo: DemoKey | null = null;
  if (runsApi) {
    sink.info(`  tenant: ensuring the demo tenant "${DEMO_TENANT_ID}"…`);
    demo = await ensureDemoTenant(system.stores, settings.demoApiKey, new Date());
    // Inside the request: the line carries its trace id and the typed code when there is one
    // (docs/adr/0067: an outage logs store.connection for each 503, not "internal"); the error's
    // text passes the redactor (docs/adr/0069).
    handler = options.api!(system, (error, where) =>
      sink.error(`error ${VeetbotError.isInstance(error) ? error.code : 'internal'}`, {
        err: error,
        method: where.method,
        path: where.path,
      }),
    );
  }
  if (state.stopping) return;
  if (runsWorker) system.worker.start();

  if (runsApi) printApiStarted(settings, sink, demo!);
  if (runsWorker) {
    const s = system.worker.settings;
    sink.info(
      `worker ${owner} started: concurrency=${s.concurrency} poll_ms=${s.pollIntervalMs} sweep_ms=${s.sweepIntervalMs} data_dir=${settings.dataDir}`,
    );
  }
  if (workerPort !== null) sink.info(`  worker operations: http://${settings.host}:${workerPort}/metrics, /healthz, /readyz`);

  // ADR-0131: "The API and the interactive worker warm the memory in the background when they
  // start, the API only once it listens" — here, after the api's handler serves and the loop
  // runs, in every role. The operator's servers only: their memory serves every tenant's
  // session (docs/adr/0024). The warm-up records nothing; it is only printed.
  if (system.mcp !== undefined && serverIds.length > 0) {
    const mcp = system.mcp;
    sink.info(`  MCP warm-up: ${serverIds.join(', ')} (one at a time, in the background)…`);
    const began = Date.now();
    void mcp.warmUp().then(
      (report) => {
        const took = `${((Date.now() - began) / 1000).toFixed(1)} s`;
        if (report.failed.length === 0) sink.info(`  MCP warm-up: ${report.warmed.join(', ') || 'nothing'} remembered in ${took}`);
        else
          sink.info(
            `  MCP warm-up: ${report.warmed.length === 0 ? 'nothing' : report.warmed.join(', ')} remembered; ${report.failed.join(', ')} still unreachable after ${report.rounds} round(s) (${took}); discovered at session open`,
          );
      },
      () => sink.info('  MCP warm-up: did not finish; servers are discovered at session open'),
    );
  }
}

function listen(settings: Settings, port: number, variable: string, listener: RequestListener): Promise<Server> {
  const server = createServer(listener);
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      if (error.code === 'EADDRINUSE')
        reject(new StartupError('startup.port_in_use', `${settings.host}:${port} is already in use (set ${variable} to another port)`));
      else reject(new StartupError('startup.failed', `cannot listen on ${settings.host}:${port} (${error.code ?? error.message})`));
    };
    const onListening = () => {
      server.off('error', onError);
      resolve(server);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, settings.host);
  });
}

function printApiStarted(settings: Settings, sink: Log, demo: DemoKey): void {
  const base = `http://${settings.host}:${settings.port}`;
  const lines = [
    `veetbot listening on ${base}`,
    `  database: ${settings.databaseUrl === null ? databaseLabel(settings) : 'PostgreSQL (DATABASE_URL)'}`,
    `  worker:   ${settings.role === 'api' ? 'not in this process (--api-only): run `pnpm start:worker` beside it' : 'in this process'}`,
  ];
  if (settings.role === 'api' && settings.databaseUrl === null) {
    lines.push('  note: PGlite is one process; with --api-only no worker can run the steps. Use DATABASE_URL to run api and worker apart.');
  }
  let key: string | null = null;
  if (demo.kind === 'created') {
    key = demo.key;
    lines.push(`Demo tenant "${DEMO_TENANT_ID}" created. Its API key (printed this once; stored only as a sha256):`, `  ${demo.key}`);
  } else if (demo.kind === 'fixed') {
    key = demo.key;
    lines.push(`Demo tenant "${DEMO_TENANT_ID}" uses the API key from VEETBOT_DEMO_API_KEY.`);
  } else {
    lines.push(
      `Demo tenant "${DEMO_TENANT_ID}" exists; its API keys were printed when they were made (\`pnpm veetbot key create --tenant ${DEMO_TENANT_ID} …\` makes another).`,
    );
  }
  const shown = key ?? '<your demo API key>';
  lines.push(
    'Next step: open a session and see the pinned tools:',
    `  curl -s -X POST ${base}/v1/sessions -H 'Authorization: Bearer ${shown}' -H 'Content-Type: application/json' -d '{"agent_id":"demo"}'`,
    `More keys (an agent's without approvals.decide, an approver's with it): pnpm veetbot key create --tenant ${DEMO_TENANT_ID} --scopes …`,
    `The API's document: ${base}/v1/openapi.json`,
    `The operator console (sign in with an API key): ${base}/console`,
  );
  sink.info(lines.join('\n'));
}

interface State {
  system: ComposedSystem | null;
  database: Database | null;
  telemetry: Telemetry | null;
  stopping: boolean;
  servers: Server[];
}

function installSignals(settings: Settings, state: State, sink: Log): void {
  const onSignal = (signal: NodeJS.Signals) => {
    if (state.stopping) {
      sink.error(`${signal} again: exiting without waiting for ${state.system?.worker.inFlight ?? 0} batch(es)`);
      process.exit(1);
    }
    state.stopping = true;
    const system = state.system;
    sink.info(`veetbot stopping (${signal}): draining ${system?.worker.inFlight ?? 0} batch(es) for up to ${settings.drainMs} ms`);
    for (const server of state.servers) {
      server.close();
      server.closeAllConnections?.();
    }
    void (async () => {
      // A drained stop is a success (exit 0, so `pnpm start` and a service manager report no
      // failure); one that left batches behind is not (exit 1) — docs/adr/0057.
      let drained = true;
      if (system !== null) {
        const report = await system.close({ drainMs: settings.drainMs });
        drained = report.drained;
        if (report.drained) sink.info('drained; leases released; exiting');
        else sink.error(`drain timed out: ${report.abandoned} batch(es) abandoned; their leases expire and the sweep recovers them`);
      }
      await state.database?.close();
      // The spans of the drained batches are exported before the process ends (bounded by the
      // exporter's own timeout): a stopped worker's last calls are in the trace too.
      await state.telemetry?.shutdown().catch(() => sink.error('tracing: the last spans could not be exported'));
      sink.flush();
      process.exit(drained ? 0 : 1);
    })().catch((error: unknown) => {
      sink.error(`shutdown failed code=${VeetbotError.isInstance(error) ? error.code : 'unknown'}`);
      process.exit(1);
    });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/** A secrets key that cannot be read or decoded is a start-up error naming the variable (never the key). */
async function composeSecrets(compose: () => Promise<ComposedSystem>): Promise<ComposedSystem> {
  try {
    return await compose();
  } catch (cause) {
    if (VeetbotError.isInstance(cause) && cause.code.startsWith('credential.key_'))
      throw new StartupError('startup.config_invalid', cause.message, { cause });
    throw cause;
  }
}

function secretKeySource(system: ComposedSystem): string {
  const { source, path, keyring } = system.secretKeys;
  const where =
    source === 'generated' ? `generated into ${path} (mode 0600; back it up)` : source === 'data folder' ? (path ?? '') : source;
  return `${where}, key id ${keyring.current.id}`;
}
