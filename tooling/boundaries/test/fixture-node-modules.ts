// Lays out a node_modules folder for a fixture tree the way pnpm lays out the real one, so that
// dependency-cruiser resolves fixture imports exactly as it resolves the repository's:
//   node_modules/@veetbot/<key>  -> ../../packages/<key> (or apps/, tooling/)   workspace links
//   node_modules/<lib>           -> .pnpm/<lib>@0.0.0-fixture/node_modules/<lib>
// Libraries are stand-ins (a package.json and an empty module): the gate judges names and
// paths, not code. node_modules is git-ignored, so this is rebuilt before every run.

import { mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/** The libraries the fixture trees import; one stand-in each. */
export const FIXTURE_LIBRARIES = [
  'zod',
  'ajv',
  'ajv-formats',
  '@opentelemetry/api',
  '@opentelemetry/sdk-metrics',
  'prom-client',
  '@modelcontextprotocol/sdk',
  '@modelcontextprotocol/server',
  '@modelcontextprotocol/client',
  'pg',
  'drizzle-orm',
  '@electric-sql/pglite',
  'drizzle-kit',
  'left-pad',
  'vitest',
  'fast-check',
  'playwright-core',
] as const;

function writeStandIn(folder: string, name: string): void {
  mkdirSync(join(folder, 'client'), { recursive: true });
  writeFileSync(
    join(folder, 'package.json'),
    `${JSON.stringify({ name, version: '0.0.0-fixture', main: 'index.js', types: 'index.d.ts' })}\n`,
  );
  writeFileSync(join(folder, 'index.js'), 'module.exports = {};\n');
  writeFileSync(join(folder, 'index.d.ts'), 'export {};\n');
  // The MCP SDK is imported by subpath (`@modelcontextprotocol/sdk/client/index.js`).
  writeFileSync(join(folder, 'client', 'index.js'), 'module.exports = {};\n');
}

function link(target: string, at: string): void {
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(relative(dirname(at), target), at);
}

/** Rebuilds `<fixtureRoot>/node_modules`. */
export function buildFixtureNodeModules(fixtureRoot: string, scope = '@veetbot'): void {
  const modules = join(fixtureRoot, 'node_modules');
  rmSync(modules, { recursive: true, force: true });

  for (const name of FIXTURE_LIBRARIES) {
    const store = join(modules, '.pnpm', `${name.replace('/', '+')}@0.0.0-fixture`, 'node_modules', name);
    writeStandIn(store, name);
    link(store, join(modules, name));
  }

  for (const folder of ['packages', 'apps', 'tooling']) {
    const base = join(fixtureRoot, folder);
    if (!existsSync(base)) continue;
    for (const entry of readdirSync(base, { withFileTypes: true })) {
      if (entry.isDirectory()) link(join(base, entry.name), join(modules, scope, entry.name));
    }
  }
}
