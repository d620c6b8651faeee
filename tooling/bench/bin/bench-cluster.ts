import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { startThrowawayCluster, type ThrowawayCluster } from '@veetbot/pg-cluster';
import type { OwnedCluster } from '../src/bench-context';

/**
 * The bench's own PostgreSQL (docs/adr/0072, issue 27 item 1): a throwaway cluster with the
 * shared default server's settings (`/etc/postgresql/15/main`: 100 connections, 128 MB shared
 * buffers, autovacuum off, fsync on) plus pg_stat_statements, loaded at start and tracking
 * statements inside functions too, so the bench can say what runs inside each PL/pgSQL call.
 * `BENCH_POSTGRES=external` runs on DATABASE_URL's server instead (no statement table there).
 */
export const BENCH_CLUSTER_SETTINGS: Readonly<Record<string, string>> = {
  autovacuum: 'off',
  max_wal_size: '1GB',
  min_wal_size: '80MB',
  shared_preload_libraries: 'pg_stat_statements',
  'pg_stat_statements.track': 'all',
  'pg_stat_statements.max': '10000',
};

export interface BenchCluster {
  readonly cluster: ThrowawayCluster;
  readonly owned: OwnedCluster;
  /** Stop it and delete its folder; safe to call twice. */
  remove(): Promise<void>;
}

/** Whether the bench should use the external server named by DATABASE_URL. */
export function wantsExternalServer(): boolean {
  return process.env.BENCH_POSTGRES === 'external';
}

/** Why the extension cannot load here, or null when its control file is installed. */
export function missingStatementsExtension(): string | null {
  const root = '/usr/share/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((m) => /^\d+$/.test(m)) : [];
  const found = majors.some((m) => existsSync(join(root, m, 'extension', 'pg_stat_statements.control')));
  return found
    ? null
    : 'pg_stat_statements is not installed (/usr/share/postgresql/*/extension/pg_stat_statements.control; Debian: postgresql-contrib)';
}

export async function startBenchCluster(): Promise<BenchCluster> {
  const missing = missingStatementsExtension();
  if (missing !== null) throw new Error(missing);
  const cluster = await startThrowawayCluster({ settings: BENCH_CLUSTER_SETTINGS });
  try {
    const statsUrl = cluster.url('postgres');
    const client = new pg.Client({ connectionString: statsUrl });
    await client.connect();
    try {
      await client.query('create extension if not exists pg_stat_statements');
    } finally {
      await client.end();
    }
    // The first line of postmaster.pid is the postmaster's pid (its children are the server).
    const pidFile = await readFile(join(cluster.folder, 'data', 'postmaster.pid'), 'utf8');
    const postmasterPid = Number(pidFile.split('\n')[0]);
    if (!Number.isInteger(postmasterPid) || postmasterPid <= 0) throw new Error(`unreadable postmaster.pid: ${pidFile.slice(0, 40)}`);
    return { cluster, owned: { postmasterPid, statsUrl }, remove: () => cluster.remove() };
  } catch (error) {
    await cluster.remove();
    throw error;
  }
}
