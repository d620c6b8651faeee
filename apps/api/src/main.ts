import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { migrate, openDatabase, type Database } from '@veetbot/store-postgres';
import { buildApp } from './app';
import { composeSystem, type ComposedSystem } from './compose';
import { DEMO_TENANT_ID, ensureDemoTenant, type DemoKey } from './embedded/demo-tenant';
import { prepareOperatorConfig } from './embedded/operator-config';
import { readSettings, type EmbeddedSettings } from './embedded/settings';
import { StartupError, startupErrorLine } from './embedded/startup-error';
import { VeetbotError } from '@veetbot/domain';

/**
 * `pnpm start`: the embedded default (ARCHITECTURE.md "Processes"). One process runs the api and
 * the worker loop on PGlite in a data folder (PostgreSQL when DATABASE_URL is set), applies
 * migrations, creates a demo tenant and prints its key once, loads the operator configuration
 * (writing the example on first start), and listens on 127.0.0.1. `--api-only` runs no worker.
 */
async function main(): Promise<void> {
  const settings = readSettings(process.env, process.argv.slice(2), process.cwd());
  mkdirOrFail(settings.dataDir);
  const operator = prepareOperatorConfig(settings.operatorConfigPath);

  // The port first: a port in use fails in a second, before any database work.
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  const server = createServer((req, res) => {
    if (handler !== null) return handler(req, res);
    res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' });
    res.end(JSON.stringify({ error: { code: 'service.starting', message: 'The service is starting.' } }));
  });
  await listen(server, settings);

  const database = await openAndMigrate(settings);
  const system = await composeSecrets(() => composeSystem({
    database,
    dataDir: settings.dataDir,
    secretsEnv: process.env,
    operatorServers: operator.config.servers,
    logError: (error, where) => console.error(`error internal: ${where.method} ${where.path}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`),
    onWorkerEvent: (event) => {
      if (event.kind === 'step_failed' || event.kind === 'claim_failed' || event.kind === 'sweep_failed') {
        const detail = event.error instanceof Error ? event.error.message.split('\n')[0] : String(event.error);
        console.error(`warn worker.${event.kind}: ${detail}`);
      }
    },
  }));
  const demo = await ensureDemoTenant(system.stores, settings.demoApiKey, new Date());
  const { app } = buildApp(system.deps);
  handler = getRequestListener(app.fetch);
  if (!settings.apiOnly) system.worker.start();

  printStarted(settings, operator.written, operator.config.servers.map((s) => s.serverId), demo, system);
  installShutdown(server, system, database);
}

function mkdirOrFail(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (cause) {
    throw new StartupError('startup.config_invalid', `VEETBOT_DATA_DIR ${dataDir} cannot be created (${(cause as NodeJS.ErrnoException).code ?? 'error'})`, { cause });
  }
}

function listen(server: Server, settings: EmbeddedSettings): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      if (error.code === 'EADDRINUSE') reject(new StartupError('startup.port_in_use', `${settings.host}:${settings.port} is already in use (set VEETBOT_PORT to another port)`));
      else reject(new StartupError('startup.failed', `cannot listen on ${settings.host}:${settings.port} (${error.code ?? error.message})`));
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(settings.port, settings.host);
  });
}

async function openAndMigrate(settings: EmbeddedSettings): Promise<Database> {
  const where = settings.databaseUrl === null ? `PGlite in ${join(settings.dataDir, 'pglite')}` : 'PostgreSQL at DATABASE_URL';
  let database: Database;
  try {
    database = await openDatabase(settings.databaseUrl === null ? { dataDir: join(settings.dataDir, 'pglite') } : { url: settings.databaseUrl });
    await migrate(database);
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
    throw new StartupError('startup.database_unreachable', `${where}: ${detail}`, { cause });
  }
  return database;
}

/** A secrets key that cannot be read or decoded is a start-up error naming the variable (never the key). */
async function composeSecrets(compose: () => Promise<ComposedSystem>): Promise<ComposedSystem> {
  try {
    return await compose();
  } catch (cause) {
    if (VeetbotError.isInstance(cause) && cause.code.startsWith('credential.key_')) throw new StartupError('startup.config_invalid', cause.message, { cause });
    throw cause;
  }
}

function printStarted(settings: EmbeddedSettings, wroteConfig: boolean, servers: readonly string[], demo: DemoKey, system: ComposedSystem): void {
  const base = `http://${settings.host}:${settings.port}`;
  const lines = [
    `veetbot listening on ${base}`,
    `  database: ${settings.databaseUrl === null ? `PGlite in ${join(settings.dataDir, 'pglite')}` : 'PostgreSQL (DATABASE_URL)'}`,
    `  worker:   ${settings.apiOnly ? 'not in this process (--api-only)' : 'in this process'}`,
    `  operator configuration: ${settings.operatorConfigPath}${wroteConfig ? ' (example written)' : ''}; MCP servers: ${servers.length === 0 ? 'none' : servers.join(', ')}`,
    `  tenant secrets key: ${secretKeySource(system)}`,
  ];
  if (settings.apiOnly && settings.databaseUrl === null) {
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
    lines.push(`Demo tenant "${DEMO_TENANT_ID}" exists; its API key was printed when it was created.`);
  }
  const shown = key ?? '<your demo API key>';
  lines.push(
    'Next step: open a session and see the pinned tools:',
    `  curl -s -X POST ${base}/v1/sessions -H 'Authorization: Bearer ${shown}' -H 'Content-Type: application/json' -d '{"agent_id":"demo"}'`,
    `The API's document: ${base}/v1/openapi.json`,
  );
  console.log(lines.join('\n'));
}

function secretKeySource(system: ComposedSystem): string {
  const { source, path, keyring } = system.secretKeys;
  const where = source === 'generated' ? `generated into ${path} (mode 0600; back it up)` : source === 'data folder' ? path ?? '' : source;
  return `${where}, key id ${keyring.current.id}`;
}

function installShutdown(server: Server, system: ComposedSystem, database: Database): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`veetbot stopping (${signal}): draining in-flight calls`);
    server.close();
    server.closeAllConnections?.();
    void (async () => {
      await system.close({ drainMs: 20_000 });
      await database.close();
      process.exit(0);
    })().catch((error: unknown) => {
      console.error(startupErrorLine(error));
      process.exit(1);
    });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(startupErrorLine(error));
  process.exit(1);
});
