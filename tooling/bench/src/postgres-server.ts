import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDatabase, dropDatabase } from '@veetbot/store-postgres';

/** The server the PostgreSQL benchmarks use; the same default as the test suites. */
export function serverUrl(): string {
  return process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
}

/** Without the password, for printing. */
export function displayUrl(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

/**
 * Whether the server answers within a few seconds. Returns the reason when it does not, so the
 * skip line can say why.
 */
export async function probeServer(url: string): Promise<{ ok: true; version: string } | { ok: false; reason: string }> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    const result = await client.query<{ server_version: string }>('show server_version');
    return { ok: true, version: result.rows[0]?.server_version ?? 'unknown' };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message || error.name : String(error) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

export interface ScratchDatabase {
  readonly name: string;
  readonly url: string;
  drop(): Promise<void>;
}

/** A fresh database on the server, dropped by `drop()`; never the shared `test` database. */
export async function scratchDatabase(server: string, prefix: string): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const url = await createDatabase(server, name);
  return { name, url, drop: () => dropDatabase(server, name) };
}
