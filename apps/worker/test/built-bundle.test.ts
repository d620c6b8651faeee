import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * docs/adr/0048: the worker's start loads only what a worker on PostgreSQL uses. PGlite, the
 * OpenTelemetry SDK and its exporter, pino-pretty and the MCP SDKs are not static imports of the
 * built bundle (each was one, and together they were a third of the idle RSS); all but the MCP
 * server are still in it, as dynamic imports behind the choice that needs them.
 */
const REPO = fileURLToPath(new URL('../../..', import.meta.url));
const BUNDLE = join(REPO, 'apps/worker/dist/main.mjs');

describe('the built worker bundle', () => {
  it('imports PGlite, the OpenTelemetry SDK and the MCP SDK only when used', async () => {
    await promisify(execFile)(process.execPath, ['scripts/build-apps.mjs', 'worker'], { cwd: REPO });
    const bundle = await readFile(BUNDLE, 'utf8');
    const packageOf = (url: string) =>
      /node_modules\/((?:@[^/]+\/)?[^/]+(?:\/pglite)?)\//.exec(url.split('node_modules/.pnpm/')[1] ?? '')?.[1];
    const statics = new Set([...bundle.matchAll(/\bfrom "(file:[^"]+)"/g)].map((m) => packageOf(m[1]!)));
    const dynamics = new Set([...bundle.matchAll(/\bimport\("(file:[^"]+)"\)/g)].map((m) => packageOf(m[1]!)));

    // What every worker runs with stays a static import.
    for (const used of ['pg', 'drizzle-orm', 'ajv', 'zod', 'prom-client', '@opentelemetry/api', 'pino']) expect(statics).toContain(used);
    // Tracing (docs/adr/0068) loads the SDK and its exporter only when OTEL_* turns it on; the
    // log's pretty form (docs/adr/0069) only on a terminal or with LOG_FORMAT=pretty.
    for (const lazy of [
      '@electric-sql/pglite',
      'drizzle-orm/pglite',
      '@modelcontextprotocol/client',
      '@opentelemetry/sdk-node',
      '@opentelemetry/sdk-trace-base',
      '@opentelemetry/exporter-trace-otlp-http',
      'pino-pretty',
    ]) {
      expect(statics).not.toContain(lazy);
      expect(dynamics).toContain(lazy);
    }
    expect(statics).not.toContain('@modelcontextprotocol/server');
  });
});
