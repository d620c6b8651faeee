// Hard gate 6 (gate.structure.import_boundary) must bite: the real depcruise binary with the real
// root configuration fails on a tree of deliberate violations, naming the rule each one breaks,
// and passes a tree that uses every row's allowances. One run per tree (start-up is the cost).

import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, table } from './boundary-modules';
import { buildFixtureNodeModules } from './fixture-node-modules';
import { cruise, type CruiseOutcome, type Violation } from './run-depcruise';

const CLEAN = join(FIXTURES, 'clean');
const VIOLATIONS = join(FIXTURES, 'violations');

let clean: CruiseOutcome;
let violations: CruiseOutcome;

beforeAll(async () => {
  buildFixtureNodeModules(CLEAN);
  buildFixtureNodeModules(VIOLATIONS);
  [clean, violations] = await Promise.all([cruise(CLEAN), cruise(VIOLATIONS)]);
}, 60_000);

function sourceFiles(root: string, folder = root): string[] {
  return readdirSync(folder).flatMap((name) => {
    const full = join(folder, name);
    if (name === 'node_modules') return [];
    if (statSync(full).isDirectory()) return sourceFiles(root, full);
    return name.endsWith('.ts') ? [relative(root, full)] : [];
  });
}

/** [rule, from, a fragment of to] — each must be reported. */
const EXPECTED: readonly [string, string, string][] = [
  // a package importing a sibling it may not see
  ['domain:src:workspace', 'packages/domain/src/index.ts', 'packages/ports/src/index.ts'],
  ['domain:src:node-builtin', 'packages/domain/src/read-config.ts', 'fs'],
  ['no-circular-between-packages', 'packages/domain/src/index.ts', 'packages/ports/src/index.ts'],
  // ports: interfaces only
  ['ports:src:type-only', 'packages/ports/src/defaults.ts', 'packages/domain/src/index.ts'],
  // an `import type` edge breaking a rule: invisible without tsPreCompilationDeps
  ['validation:src:workspace', 'packages/validation/src/index.ts', 'packages/ports/src/index.ts'],
  ['validation:src:external', 'packages/validation/src/pad.ts', '/node_modules/left-pad/'],
  // unresolvable imports; the bare workspace name is caught by the allow-list too
  ['not-to-unresolvable', 'packages/registry/src/index.ts', '@veetbot/no-such-package'],
  ['not-to-unresolvable', 'packages/registry/src/index.ts', './missing-module'],
  ['registry:src:workspace', 'packages/registry/src/index.ts', '@veetbot/no-such-package'],
  ['registry:src:external', 'packages/registry/src/index.ts', '/node_modules/vitest/'],
  // executor importing a store-postgres path, and reaching the pg driver through it
  ['executor:src:workspace', 'packages/executor/src/persist.ts', 'packages/store-postgres/src/runs-table.ts'],
  ['not-to-another-package-internals', 'packages/executor/src/persist.ts', 'packages/store-postgres/src/runs-table.ts'],
  ['database-drivers-only-in-store-postgres', 'packages/executor/src/index.ts', '/node_modules/pg/'],
  // the MCP SDK reached through a helper: the importing file's own edges are innocent
  ['runtime:src:external', 'packages/runtime/src/session-helper.ts', '/node_modules/@modelcontextprotocol/sdk/'],
  ['mcp-sdk-only-in-mcp-adapter', 'packages/runtime/src/index.ts', '/node_modules/@modelcontextprotocol/sdk/'],
  ['not-to-another-package-internals', 'packages/runtime/src/registry-internals.ts', 'packages/registry/src/rules.ts'],
  // the SDK split by side (docs/adr/0044): the server side is the gateway's alone, and the 1.x
  // package is no package's, the adapter's included ("The client adapter moved")
  ['mcp-adapter:src:external', 'packages/mcp-adapter/src/legacy-sdk.ts', '/node_modules/@modelcontextprotocol/sdk/'],
  ['validation:src:external', 'packages/validation/src/mcp-serve.ts', '/node_modules/@modelcontextprotocol/server/'],
  ['mcp-server-sdk-only-in-mcp-gateway', 'packages/validation/src/mcp-serve.ts', '/node_modules/@modelcontextprotocol/server/'],
  // the sandbox (issue 13): the adapter sees no pipeline package, and no package but the
  // composition roots sees the adapter
  ['sandbox-adapter:src:workspace', 'packages/sandbox-adapter/src/index.ts', 'packages/executor/src/index.ts'],
  ['runtime:src:workspace', 'packages/runtime/src/sandbox-reach.ts', 'packages/sandbox-adapter/src/index.ts'],
  // "the row that will be violated first"
  ['tools-builtin:src:workspace', 'packages/tools-builtin/src/index.ts', 'packages/registry/src/index.ts'],
  // a package importing an app; tests held to their row
  ['policy:src:workspace', 'packages/policy/src/index.ts', 'apps/cli/src/index.ts'],
  ['no-package-reaches-an-app', 'packages/policy/src/index.ts', 'apps/cli/src/index.ts'],
  ['policy:dev:workspace', 'packages/policy/test/policy-check.ts', 'packages/executor/src/index.ts'],
  // apps: not each other, not an adapter's own library
  ['cli:src:workspace', 'apps/cli/src/index.ts', 'apps/api/src/index.ts'],
  ['cli:src:external', 'apps/cli/src/index.ts', '/node_modules/pg/'],
  // test support (docs/adr/0030): no src/ imports it, an app's included
  ['api:src:workspace', 'apps/api/src/test-kit.ts', 'packages/port-contracts/src/index.ts'],
  // a package the table does not know
  ['not-in-boundary-table', 'packages/unlisted/src/index.ts', 'packages/unlisted/src/util.ts'],
  // tooling/ (docs/adr/0031): a tool held to its row, a package's src/ reaching a tool, a tool
  // the table does not know
  ['test-gates:src:workspace', 'tooling/test-gates/src/index.ts', 'packages/domain/src/index.ts'],
  ['validation:src:workspace', 'packages/validation/src/gates.ts', 'tooling/test-gates/src/index.ts'],
  ['not-in-boundary-table', 'tooling/lint/src/index.ts', 'tooling/lint/src/util.ts'],
];

const describeViolation = (v: Violation): string => `${v.rule.name}: ${v.from} -> ${v.to}`;

describe('the violations fixture', () => {
  it('fails the gate with a non-zero exit code', () => {
    expect(violations.errorCount).toBeGreaterThan(0);
    expect(violations.exitCode).not.toBe(0);
    expect(violations.report).toMatch(/dependency violations \(\d+ errors, 0 warnings\)/);
  });

  it.each(EXPECTED)('reports %s from %s', (rule, from, toFragment) => {
    const found = violations.violations.filter((v) => v.rule.name === rule && v.from === from && v.to.includes(toFragment));
    expect(found, violations.violations.map(describeViolation).join('\n')).not.toHaveLength(0);
    expect(found.every((v) => v.rule.severity === 'error')).toBe(true);
  });

  it('fires no rule it was not built to fire', () => {
    const fired = new Set(violations.violations.map((v) => v.rule.name));
    expect([...fired].sort()).toEqual([...new Set(EXPECTED.map(([rule]) => rule))].sort());
  });

  it("leaves the allowed edges alone (the SDK in mcp-adapter, pg in store-postgres, ports' import type)", () => {
    const offenders = violations.violations.filter(
      (v) =>
        (v.from.startsWith('packages/mcp-adapter/') && v.from !== 'packages/mcp-adapter/src/legacy-sdk.ts') ||
        v.from.startsWith('packages/store-postgres/') ||
        (v.from === 'packages/ports/src/tool.ts' && v.rule.name !== 'no-circular-between-packages'),
    );
    expect(offenders.map(describeViolation)).toEqual([]);
  });

  it("matches libraries at pnpm's .pnpm/ store paths", () => {
    const sdk = violations.violations.find((v) => v.rule.name === 'mcp-sdk-only-in-mcp-adapter');
    expect(sdk?.to).toMatch(/node_modules\/\.pnpm\/@modelcontextprotocol\+sdk@[^/]+\/node_modules\/@modelcontextprotocol\/sdk\//);
  });
});

describe('the clean fixture', () => {
  it('passes the gate', () => {
    expect(clean.violations.map(describeViolation)).toEqual([]);
    expect(clean.exitCode).toBe(0);
    expect(clean.report).toContain('no dependency violations found');
  });

  it('was really cruised: every source file of the tree is in the graph', () => {
    const files = sourceFiles(CLEAN);
    expect(files.length).toBeGreaterThan(15);
    expect(files.filter((file) => !clean.modules.includes(file))).toEqual([]);
  });

  it('exercises every row of the table', () => {
    const folders = Object.entries(table.rows).map(
      ([key, row]) =>
        `${{ package: 'packages', 'test-support': 'packages', tooling: 'tooling' }[row.kind as string] ?? 'apps'}/${key}/src/index.ts`,
    );
    expect(folders.filter((entry) => !clean.modules.includes(entry))).toEqual([]);
  });
});
