import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createDatabase,
  createStores,
  dropDatabase,
  migrate,
  openDatabase,
  openMigratedMemoryDatabase,
  type Database,
} from '@veetbot/store-postgres';
import type { Stores } from '@veetbot/ports';

export type Driver = 'pglite' | 'postgres';

/** Where migrated PGlite templates are kept between test files and runs (keyed by the migrations). */
export const TEMPLATE_CACHE = join(tmpdir(), 'veetbot-pglite-templates');

export interface TestDatabase {
  readonly driver: Driver;
  readonly database: Database;
  readonly stores: Stores;
  /** The URL of this test's own PostgreSQL database (for child processes); null on PGlite. */
  readonly url: string | null;
  close(): Promise<void>;
}

/** The drivers to run a suite on: PGlite always, PostgreSQL when DATABASE_URL is set (CI sets it). */
export function drivers(): Driver[] {
  return process.env.DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
}

/**
 * A migrated database of this test's own: PGlite in memory, or a fresh database on the
 * PostgreSQL server at DATABASE_URL, dropped on close. Tests never share state.
 */
export async function openTestDatabase(driver: Driver, options: { poolSize?: number } = {}): Promise<TestDatabase> {
  if (driver === 'pglite') {
    // From a migrated template cached across test files (store-postgres memory-template.ts).
    const database = await openMigratedMemoryDatabase(TEMPLATE_CACHE);
    return { driver, database, stores: createStores(database), url: null, close: () => database.close() };
  }
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) throw new Error('DATABASE_URL is not set');
  const name = `veetbot_it_${randomBytes(6).toString('hex')}`;
  const url = await createDatabase(serverUrl, name);
  const database = await openDatabase({ url, poolSize: options.poolSize ?? 10 });
  await migrate(database);
  return {
    driver,
    database,
    stores: createStores(database),
    url,
    close: async () => {
      await database.close();
      await dropDatabase(serverUrl, name);
    },
  };
}
