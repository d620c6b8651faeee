import { runVeetbot } from '@veetbot/composition';

/**
 * `pnpm start:worker` (ARCHITECTURE.md "Processes", production): the worker role of the one
 * composition (@veetbot/composition, ADR 0022) against the PostgreSQL at DATABASE_URL, with the
 * same settings as the api (VEETBOT_DATA_DIR, VEETBOT_OPERATOR_CONFIG and its default
 * `<data dir>/operator.json`, …) and its own operations port (VEETBOT_WORKER_PORT, default 8788:
 * /metrics, /healthz, /readyz). SIGTERM or SIGINT: stop claiming, let the batches in flight
 * finish (VEETBOT_WORKER_DRAIN_MS, default 20 s; each releases its run's lease as it ends), exit
 * 0. A second signal exits at once (1): leases left behind expire and another worker's sweep
 * takes over.
 */
void runVeetbot({ defaultRole: 'worker', argv: process.argv.slice(2), env: process.env, cwd: process.cwd() });
