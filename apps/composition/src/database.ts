import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StoreError, VeetbotError } from '@veetbot/domain';
import { migrate, openDatabase, type Database } from '@veetbot/store-postgres';
import { repairDataFolder } from './data-folder';
import type { Settings } from './settings';
import { StartupError } from './startup-error';

/** The URL without its password, for a message. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unparsable DATABASE_URL)';
  }
}

/** Where the settings put the data: for the progress lines and error messages. */
export function databaseLabel(settings: Pick<Settings, 'databaseUrl' | 'dataDir'>): string {
  return settings.databaseUrl === null
    ? `PGlite in ${join(settings.dataDir, 'pglite')}`
    : `PostgreSQL at ${redactUrl(settings.databaseUrl)}`;
}

/**
 * Open the database the settings name and apply every migration (an advisory lock serialises
 * roles migrating together). The first contact is bounded by VEETBOT_STARTUP_TIMEOUT_MS: a
 * database that never answers is a start-up error, not a hang. A server that answers but has
 * no such database (SQLSTATE 3D000) is `startup.database_missing` naming it, so the operator
 * knows to create it rather than to look for a network fault.
 */
export async function openAndMigrate(settings: Settings): Promise<Database> {
  const where = databaseLabel(settings);
  if (settings.databaseUrl === null) lockPglite(settings.dataDir);
  let database: Database;
  try {
    database = await openDatabase(
      settings.databaseUrl === null
        ? { dataDir: join(settings.dataDir, 'pglite') }
        : { url: settings.databaseUrl, ...(settings.poolSize === undefined ? {} : { poolSize: settings.poolSize }) },
    );
  } catch (cause) {
    throw new StartupError('startup.database_unreachable', `${where}: ${firstLine(cause)}`, { cause });
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<'timeout'>((done) => (timer = setTimeout(() => done('timeout'), settings.startupTimeoutMs)));
  try {
    const answer = await Promise.race([migrate(database).then(() => 'ok' as const), timeout]);
    if (answer === 'timeout')
      throw new StartupError('startup.database_unreachable', `${where} did not answer within ${settings.startupTimeoutMs} ms`);
    // docs/adr/0054: PGlite unpacks a new database with explicit 0666 modes, which no umask
    // narrows; made private here, once it is unpacked and before anyone is served.
    if (settings.databaseUrl === null) repairDataFolder(join(settings.dataDir, 'pglite'), new Set());
    return database;
  } catch (cause) {
    await database.close().catch(() => undefined);
    if (cause instanceof StartupError) throw cause;
    throw classifyStartupDatabaseError(cause, settings);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * PGlite is one process: a second process opening the same folder (a `veetbot key create` while
 * `pnpm start` runs, or a second `pnpm start` on another port) would corrupt it. A lock file
 * holding the owner's pid refuses that with `startup.database_in_use`; a lock left by a process
 * that no longer exists (a crash, kill -9) is taken over. Released when this process exits.
 */
function lockPglite(dataDir: string): void {
  const path = join(dataDir, 'pglite.lock');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx', mode: 0o600 });
      process.once('exit', () => {
        try {
          if (readFileSync(path, 'utf8') === String(process.pid)) unlinkSync(path);
        } catch {
          // Already gone.
        }
      });
      return;
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new StartupError(
          'startup.config_invalid',
          `${path} cannot be written (${(cause as NodeJS.ErrnoException).code ?? 'error'})`,
          { cause },
        );
      }
    }
    const holder = Number(readFileSync(path, 'utf8').trim());
    if (Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
      throw new StartupError(
        'startup.database_in_use',
        `PGlite in ${join(dataDir, 'pglite')} is open in process ${holder} (pnpm start?). PGlite belongs to one process: stop that process first, or use PostgreSQL (DATABASE_URL) to run several.`,
      );
    }
    // Stale: its process is gone.
    unlinkSync(path);
  }
  throw new StartupError('startup.database_in_use', `PGlite in ${join(dataDir, 'pglite')} is being opened by another process.`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A driver failure at start-up as the operator should read it. */
export function classifyStartupDatabaseError(cause: unknown, settings: Pick<Settings, 'databaseUrl' | 'dataDir'>): StartupError {
  const where = databaseLabel(settings);
  if (StoreError.isInstance(cause) && cause.sqlstate === '3D000' && settings.databaseUrl !== null) {
    const name = databaseName(settings.databaseUrl);
    return new StartupError(
      'startup.database_missing',
      `The database "${name}" does not exist on the server at ${redactUrl(settings.databaseUrl)}. Create it (createdb ${name}, or CREATE DATABASE "${name}") or point DATABASE_URL at an existing one.`,
      { cause },
    );
  }
  if (VeetbotError.isInstance(cause) && cause.code === 'store.connection') {
    return new StartupError('startup.database_unreachable', `${where} could not be reached.`, { cause });
  }
  if (StoreError.isInstance(cause)) {
    return new StartupError(
      'startup.migration_failed',
      `${where}: applying migrations failed (${cause.code}${cause.sqlstate === null ? '' : `, SQLSTATE ${cause.sqlstate}`}).`,
      { cause },
    );
  }
  return new StartupError('startup.database_unreachable', `${where}: ${firstLine(cause)}`, { cause });
}

function databaseName(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.replace(/^\//, '')) || 'postgres';
  } catch {
    return '(unknown)';
  }
}

function firstLine(error: unknown): string {
  return error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
}
