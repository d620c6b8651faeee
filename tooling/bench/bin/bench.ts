import { startBenchCluster, wantsExternalServer, type BenchCluster } from './bench-cluster';

/**
 * `pnpm bench`'s entry (docs/adr/0072, issue 27 item 1): the bench's own throwaway PostgreSQL
 * cluster (pg_stat_statements, track = all) started here — outside src/, as the boundary table
 * lets only tooling code outside src/ use @veetbot/pg-cluster — handed to src/run.ts through
 * the environment (DATABASE_URL and the cluster's postmaster and statistics database), and
 * removed when the run ends, throws, or is interrupted. BENCH_POSTGRES=external skips it.
 */
let own: BenchCluster | null = null;
if (!wantsExternalServer()) {
  try {
    own = await startBenchCluster();
    process.env.DATABASE_URL = own.cluster.url('postgres');
    process.env.BENCH_CLUSTER_POSTMASTER_PID = String(own.owned.postmasterPid);
    process.env.BENCH_CLUSTER_STATS_URL = own.owned.statsUrl;
  } catch (error) {
    process.env.BENCH_CLUSTER_UNAVAILABLE = error instanceof Error ? error.message : String(error);
  }
}
const removeOwn = () => own?.remove() ?? Promise.resolve();
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void removeOwn().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143)));
try {
  await import('../src/run');
} finally {
  await removeOwn();
}
