import { fileURLToPath } from 'node:url';
import { drizzle as drizzleNodePostgres } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePostgres } from 'drizzle-orm/node-postgres/migrator';
import { classifyDriverError } from './classify-error';
import type { Database } from './database';

/** The repository's migrations/ folder (ARCHITECTURE.md "Layout"), committed SQL from drizzle-kit. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../../migrations', import.meta.url));

// pg_advisory_lock key: processes starting together apply migrations one at a time.
const MIGRATION_LOCK_KEY = 0x76656574; // 'veet'

/**
 * Apply pending migrations; safe to re-run (drizzle's migrator records what it applied in
 * drizzle.__drizzle_migrations and skips it). On PostgreSQL the run holds an advisory lock on
 * the same connection, so several api/worker processes starting at once do not race.
 */
export async function migrate(database: Database, options: { migrationsFolder?: string } = {}): Promise<void> {
  const migrationsFolder = options.migrationsFolder ?? MIGRATIONS_FOLDER;
  const native = database.native;
  try {
    if (native.driver === 'pglite') {
      // Loaded only on PGlite (docs/adr/0048), as database.ts loads PGlite itself.
      const [{ drizzle: drizzlePglite }, { migrate: migratePglite }] = await Promise.all([
        import('drizzle-orm/pglite'),
        import('drizzle-orm/pglite/migrator'),
      ]);
      await database.exclusive(() => migratePglite(drizzlePglite({ client: native.client }), { migrationsFolder }));
      return;
    }
    const client = await native.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      try {
        await migrateNodePostgres(drizzleNodePostgres({ client }), { migrationsFolder });
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
      }
    } finally {
      client.release();
    }
  } catch (error) {
    throw classifyDriverError(error);
  }
}
