import { migrate, openDatabase, type Database } from '@veetbot/store-postgres';
import type { BenchContext } from './bench-context';
import { scratchDatabase, serverUrl } from './postgres-server';

/**
 * The database of a benchmark that runs on either driver, chosen by DATABASE_URL: set (and the
 * server answers) → a fresh database on that PostgreSQL server, dropped at the end; unset →
 * PGlite in memory, the embedded default. Migrated either way.
 */
export interface BenchDatabase {
  readonly database: Database;
  /** For the printed lines: which driver, and where. */
  readonly label: string;
  /** The PostgreSQL URL of the scratch database (a child process can open it), or null on PGlite. */
  readonly url: string | null;
  close(): Promise<void>;
}

/** Whether such a benchmark runs on PostgreSQL (DATABASE_URL set and the server answering). */
export function runsOnPostgres(context: BenchContext): boolean {
  return Boolean(process.env.DATABASE_URL) && context.postgres.reachable;
}

/** Why it runs on PGlite instead, for the printed line. */
export function pgliteReason(context: BenchContext): string {
  return process.env.DATABASE_URL ? `DATABASE_URL is set but ${context.postgres.server} is unreachable` : 'DATABASE_URL is not set';
}

export async function openBenchDatabase(context: BenchContext, prefix: string): Promise<BenchDatabase> {
  if (runsOnPostgres(context) && context.postgres.reachable) {
    const scratch = await scratchDatabase(serverUrl(), prefix);
    const database = await openDatabase({ url: scratch.url, poolSize: 10 });
    try {
      await migrate(database);
    } catch (error) {
      await database.close();
      await scratch.drop();
      throw error;
    }
    return {
      database,
      label: `PostgreSQL ${context.postgres.version} (fresh database ${scratch.name})`,
      url: scratch.url,
      async close() {
        await database.close();
        await scratch.drop();
      },
    };
  }
  const database = await openDatabase({ dataDir: 'memory://' });
  await migrate(database);
  return { database, label: `PGlite in memory (${pgliteReason(context)})`, url: null, close: () => database.close() };
}
