// The table is the only place boundaries are written down, so an incomplete or contradictory
// table must stop the gate before anything is cruised, and a complete one must yield the same
// rules for every row.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, generator, table, type BoundaryRow, type BoundaryTable } from './boundary-modules';

const scratchRoots: string[] = [];

/** A repository root holding the given folders, each with a package.json named as given. */
function repoWith(folders: Record<string, string | null>): string {
  const root = mkdtempSync(join(tmpdir(), 'veetbot-table-'));
  scratchRoots.push(root);
  for (const [folder, npmName] of Object.entries(folders)) {
    mkdirSync(join(root, folder), { recursive: true });
    if (npmName !== null) writeFileSync(join(root, folder, 'package.json'), JSON.stringify({ name: npmName }));
  }
  return root;
}

afterEach(() => {
  for (const root of scratchRoots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function withRow(key: string, change: Partial<BoundaryRow> | null): BoundaryTable {
  const rows = { ...table.rows };
  if (change === null) delete rows[key];
  else rows[key] = { ...(rows[key] as BoundaryRow), ...change };
  return { ...table, rows };
}

const EMPTY_REPO = (): string => repoWith({});

describe('the table as committed', () => {
  const rules = generator.generateForbiddenRules(table, { repoRoot: REPO_ROOT });
  const names = rules.map((rule) => rule.name);

  it('generates the rules for the repository without a problem', () => {
    expect(generator.findProblems(table, REPO_ROOT)).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
    expect(rules.every((rule) => rule.severity === 'error')).toBe(true);
  });

  it('gives every row an allow-list for its workspace imports in src/ and outside it', () => {
    for (const key of Object.keys(table.rows)) {
      expect(names).toContain(`${key}:src:workspace`);
      expect(names).toContain(`${key}:dev:workspace`);
      expect(names).toContain(`${key}:src:external`);
    }
  });

  it('holds ports to type-only imports and no other row', () => {
    expect(names.filter((name) => name.endsWith(':type-only'))).toEqual(['ports:src:type-only']);
  });

  it('restricts Node built-ins exactly where the table does', () => {
    const restricted = names.filter((name) => name.endsWith(':src:node-builtin')).map((name) => name.split(':')[0]);
    expect(restricted.sort()).toEqual(
      [
        'domain',
        'ports',
        'validation',
        'registry',
        'policy',
        'executor',
        'runtime',
        'client',
        'blob-store-folder',
        'browser-provider',
        'credential-broker',
        'port-contracts',
        'mcp-gateway',
        'mcp-test-client',
        'bench',
        'conformance',
        'pg-cluster',
        'boundaries',
        'test-gates',
        'tsconfig',
      ].sort(),
    );
  });

  it('adds the whole-graph rules', () => {
    expect(names).toEqual(
      expect.arrayContaining([
        'not-to-unresolvable',
        'not-in-boundary-table',
        'no-circular-between-packages',
        'not-to-another-package-internals',
        'no-package-reaches-an-app',
        'mcp-sdk-only-in-mcp-adapter',
        'mcp-server-sdk-only-in-mcp-gateway',
        'database-drivers-only-in-store-postgres',
      ]),
    );
    const reachable = rules.filter((rule) => rule.to.reachable === true).map((rule) => rule.name);
    expect(reachable.sort()).toEqual(
      [
        'database-drivers-only-in-store-postgres',
        'mcp-sdk-only-in-mcp-adapter',
        'mcp-server-sdk-only-in-mcp-gateway',
        'no-package-reaches-an-app',
      ].sort(),
    );
  });

  it('matches the MCP SDK by scope anywhere in a path, pnpm store paths included', () => {
    const rule = rules.find((r) => r.name === 'mcp-sdk-only-in-mcp-adapter');
    const pattern = new RegExp(([rule?.to.path].flat() as string[]).join('|'));
    expect(
      pattern.test('node_modules/.pnpm/@modelcontextprotocol+sdk@1.2.3/node_modules/@modelcontextprotocol/sdk/dist/client/index.js'),
    ).toBe(true);
    expect(pattern.test('@modelcontextprotocol/sdk/client/index.js')).toBe(true);
    expect(pattern.test('packages/registry/src/modelcontextprotocol.ts')).toBe(false);
    // The split by side (docs/adr/0044): the server side is the gateway's, not the adapter's;
    // the official servers run as processes and are nobody's library.
    expect(pattern.test('node_modules/@modelcontextprotocol/server/dist/index.mjs')).toBe(false);
    const server = rules.find((r) => r.name === 'mcp-server-sdk-only-in-mcp-gateway');
    const serverPattern = new RegExp(([server?.to.path].flat() as string[]).join('|'));
    expect(
      serverPattern.test('node_modules/.pnpm/@modelcontextprotocol+server@2.4.0/node_modules/@modelcontextprotocol/server/dist/index.mjs'),
    ).toBe(true);
    expect(serverPattern.test('node_modules/@modelcontextprotocol/server-everything/dist/index.js')).toBe(false);
    expect(serverPattern.test('node_modules/@modelcontextprotocol/client/dist/index.mjs')).toBe(false);
  });

  it('matches pg only as a library, not as a source folder called pg', () => {
    const rule = rules.find((r) => r.name === 'database-drivers-only-in-store-postgres');
    const pattern = new RegExp(([rule?.to.path].flat() as string[]).join('|'));
    expect(pattern.test('node_modules/.pnpm/pg@8.23.1/node_modules/pg/lib/index.js')).toBe(true);
    expect(pattern.test('node_modules/@types/pg/index.d.ts')).toBe(true);
    expect(pattern.test('pg')).toBe(true);
    expect(pattern.test('packages/executor/src/pg/connection.ts')).toBe(false);
    expect(pattern.test('node_modules/pg-protocol/dist/index.js')).toBe(false);
  });
});

describe('an incomplete or contradictory table is an error when generating', () => {
  it('a package folder with no row', () => {
    const root = repoWith({ 'packages/domain': '@veetbot/domain', 'packages/egress': '@veetbot/egress' });
    expect(generator.findProblems(table, root)).toEqual(['packages/egress has no row (add one before its code can pass the gate)']);
    expect(() => generator.generateForbiddenRules(table, { repoRoot: root })).toThrow(generator.BoundaryTableError);
  });

  it('an app folder with no row, even before it has a package.json', () => {
    expect(generator.findProblems(table, repoWith({ 'apps/admin': null }))).toEqual([
      'apps/admin has no row (add one before its code can pass the gate)',
    ]);
  });

  it('a package.json whose name is not the one the rules match', () => {
    expect(generator.findProblems(table, repoWith({ 'apps/cli': '@veetbot/veetbot-cli' }))).toEqual([
      'apps/cli/package.json is named "@veetbot/veetbot-cli", not "@veetbot/cli"',
    ]);
  });

  it('a row missing a cell', () => {
    const { builtins: _dropped, ...rest } = table.rows.domain as BoundaryRow;
    const broken = { ...table, rows: { ...table.rows, domain: rest as BoundaryRow } };
    expect(generator.findProblems(broken, EMPTY_REPO())).toEqual(['domain: missing builtins']);
  });

  it('a reference to a row that does not exist, or to an app', () => {
    const problems = generator.findProblems(withRow('registry', { workspace: ['domain', 'nope', 'cli'] }), EMPTY_REPO());
    expect(problems).toEqual([
      'registry: workspace names "nope", which has no row',
      'registry: workspace names the app "cli"; nothing may import an app',
    ]);
  });

  it('the shared composition (ADR 0022): only an app may import it, and it may import no app', () => {
    expect(generator.findProblems(withRow('registry', { workspace: ['domain', 'composition'] }), EMPTY_REPO())).toEqual([
      'registry: workspace names the composition "composition"; only an app may import it',
    ]);
    expect(generator.findProblems(withRow('composition', { workspace: ['domain', 'api'] }), EMPTY_REPO())).toEqual([
      'composition: workspace names the app "api"; nothing may import an app',
    ]);
    const rules = generator.generateForbiddenRules(table, { repoRoot: REPO_ROOT });
    const allowed = (name: string) => JSON.stringify(rules.find((rule) => rule.name === name)?.to.pathNot ?? []);
    // Every app may import it (it is in their allow-list); the composition's own list has no app.
    for (const app of ['api', 'worker', 'cli', 'integration-tests']) expect(allowed(`${app}:src:workspace`)).toContain('apps/composition/');
    expect(allowed('composition:src:workspace')).not.toContain('apps/api/');
    expect(allowed('registry:src:workspace')).not.toContain('apps/composition/');
  });

  it('test support (docs/adr/0030): only a dev.workspace list may name it, and ALL_PACKAGES leaves it out', () => {
    expect(generator.findProblems(withRow('registry', { workspace: ['domain', 'port-contracts'] }), EMPTY_REPO())).toEqual([
      'registry: workspace names the test support "port-contracts"; only a dev.workspace list may',
    ]);
    expect(
      generator.findProblems(withRow('registry', { dev: { workspace: ['validation', 'port-contracts'], external: [] } }), EMPTY_REPO()),
    ).toEqual([]);
    const rules = generator.generateForbiddenRules(table, { repoRoot: REPO_ROOT });
    const allowed = (name: string) => JSON.stringify(rules.find((rule) => rule.name === name)?.to.pathNot ?? []);
    for (const app of ['api', 'worker', 'cli', 'integration-tests', 'composition'])
      expect(allowed(`${app}:src:workspace`)).not.toContain('packages/port-contracts/');
    expect(allowed('blob-store-folder:dev:workspace')).toContain('packages/port-contracts/');
    expect(allowed('blob-store-folder:src:workspace')).not.toContain('packages/port-contracts/');
  });

  it('tooling (docs/adr/0031): a folder with no row; only code outside src/ may import it; no ANY', () => {
    expect(generator.findProblems(table, repoWith({ 'tooling/lint': '@veetbot/lint' }))).toEqual([
      'tooling/lint has no row (add one before its code can pass the gate)',
    ]);
    expect(generator.findProblems(withRow('store-postgres', { workspace: ['domain', 'ports', 'test-gates'] }), EMPTY_REPO())).toEqual([
      'store-postgres: workspace names the tooling "test-gates"; only code outside src/ (dev.workspace) may import it',
    ]);
    expect(generator.findProblems(withRow('bench', { external: table.ANY }), EMPTY_REPO())).toEqual([
      'bench: a tooling row lists what it imports (no ALL_PACKAGES, no ANY)',
    ]);
    const rules = generator.generateForbiddenRules(table, { repoRoot: REPO_ROOT });
    const rule = (name: string) => rules.find((candidate) => candidate.name === name);
    // Cruised like any row: its own allow-lists, and the whole-graph rules reach tooling/ too.
    expect(rule('test-gates:src:external')?.from).toEqual({ path: '(?:^|/)tooling/test-gates/src/' });
    expect(JSON.stringify(rule('not-in-boundary-table')?.from)).toContain('tooling/');
    // No package reaches a tool at run time; a config or test reaches it through dev.workspace.
    expect(JSON.stringify(rule('store-postgres:src:workspace')?.to.pathNot)).not.toContain('tooling/test-gates/');
    expect(JSON.stringify(rule('store-postgres:dev:workspace')?.to.pathNot)).toContain('tooling/test-gates/');
  });

  it('a cycle between rows, tests included', () => {
    const problems = generator.findProblems(withRow('domain', { dev: { workspace: ['ports'], external: [] } }), EMPTY_REPO());
    expect(problems).toEqual(['the table allows a cycle: domain -> ports -> domain']);
  });

  it('a library another row owns exclusively', () => {
    const problems = generator.findProblems(withRow('executor', { external: ['zod', 'pg', '@modelcontextprotocol/client'] }), EMPTY_REPO());
    expect(problems).toEqual([
      'executor: external names "@modelcontextprotocol/client", which only mcp-adapter may use',
      'executor: external names "pg", which only store-postgres may use',
    ]);
  });

  it('lists every problem at once', () => {
    const broken = withRow('policy', { workspace: ['ghost'], typeOnly: 'yes' as unknown as boolean });
    const problems = generator.findProblems(broken, repoWith({ 'packages/extra': '@veetbot/extra' }));
    expect(problems).toHaveLength(3);
  });
});
