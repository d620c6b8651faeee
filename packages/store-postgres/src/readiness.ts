import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import type { Database } from './database';
import { MIGRATIONS_FOLDER } from './migrate';

export interface DatabaseReadiness {
  /** A trivial query succeeded. */
  readonly reachable: boolean;
  /** Rows in drizzle's migration journal table (0 when the table does not exist yet). */
  readonly migrationsApplied: number;
  /** Entries in the repository's migrations/meta/_journal.json. */
  readonly migrationsExpected: number;
  /** Reachable, and every committed migration applied: what GET /readyz answers. */
  readonly ready: boolean;
}

/**
 * The api's /readyz (ARCHITECTURE.md "Processes"): the database answers and every migration
 * this build ships is applied. Never throws: an unreachable database is `reachable: false`.
 */
export async function checkReadiness(database: Database, options: { migrationsFolder?: string } = {}): Promise<DatabaseReadiness> {
  const folder = options.migrationsFolder ?? MIGRATIONS_FOLDER;
  const journal = JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] };
  const migrationsExpected = journal.entries.length;
  try {
    await database.transaction({ role: 'owner' }, (tx) => tx.execute(sql`select 1`));
  } catch {
    return { reachable: false, migrationsApplied: 0, migrationsExpected, ready: false };
  }
  let migrationsApplied = 0;
  try {
    const result = await database.transaction({ role: 'owner' }, (tx) =>
      tx.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`),
    );
    migrationsApplied = Number((result as unknown as { rows: { n: number }[] }).rows[0]?.n ?? 0);
  } catch {
    // No journal table yet: nothing applied.
  }
  return { reachable: true, migrationsApplied, migrationsExpected, ready: migrationsApplied >= migrationsExpected };
}
