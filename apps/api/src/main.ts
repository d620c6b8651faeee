import { getRequestListener } from '@hono/node-server';
import { runVeetbot } from '@veetbot/composition';
import { buildApp } from './app';
import { apiDeps } from './compose';
import { eventSettingsFromEnv } from './event-settings';
import { mcpSettingsFromEnv } from './mcp/mcp-settings';

/**
 * `pnpm start` (the embedded default, ARCHITECTURE.md "Processes"): one process runs the api and
 * the worker loop, on PGlite in a data folder (PostgreSQL when DATABASE_URL is set), applies
 * migrations, creates a demo tenant and prints its key once, loads the operator configuration
 * (writing the example on first start), and listens on 127.0.0.1. `--api-only` runs no worker
 * (`pnpm start:api`); `--worker-only` runs no api. The composition is @veetbot/composition's, the
 * same for every role (ADR 0022); this app supplies the HTTP surface.
 */
void runVeetbot({
  defaultRole: 'both',
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  api: (system, logError) =>
    getRequestListener(
      buildApp(apiDeps(system, { logError, apiSettings: { mcp: mcpSettingsFromEnv(process.env), ...eventSettingsFromEnv(process.env) } }))
        .app.fetch,
    ),
});
