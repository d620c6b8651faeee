// The import-boundary build gate: hard gate 6 (gate.structure.import_boundary) and hard gate 13.
// Run: `pnpm boundaries` (depcruise --config .dependency-cruiser.cjs packages apps tooling).
//
// Every rule is GENERATED from the table in tooling/boundaries/table.cjs — ARCHITECTURE.md
// § Import boundaries as data. To change what a package may import, edit that table; to add a
// package, add its row first (a folder under packages/, apps/ or tooling/ without a row fails
// here, before anything is cruised). tooling/boundaries/README.md explains the rules and their names.

'use strict';

const table = require('./tooling/boundaries/table.cjs');
const { generateForbiddenRules } = require('./tooling/boundaries/generate-rules.cjs');

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: generateForbiddenRules(table, { repoRoot: __dirname }),
  options: {
    // `import type` edges are invisible without this (STYLE.md); ports is made of them.
    tsPreCompilationDeps: true,
    // Libraries are leaves: what they import is not ours to police, and following them is slow.
    doNotFollow: { path: ['(^|/)node_modules/'] },
    // The gate's own fixtures are deliberate violations; they are cruised by its test only.
    // Not product code: the gate's own fixtures, and the scripted MCP servers of the integration
    // tests — stand-ins for third-party systems that speak MCP through the SDK's server side,
    // started only as separate processes and imported by nothing (docs/adr/0006).
    // And the apps' built bundles (apps/*/dist, scripts/build-apps.mjs, docs/adr/0041): generated
    // from the cruised source, with every npm import resolved to its installed file.
    exclude: { path: ['(^|/)tooling/boundaries/fixtures/', '(^|/)apps/integration-tests/servers/', '^apps/[^/]+/dist/'] },
    // Packages publish their source through package.json "exports" only (ADR 0001), so the
    // resolver must read "exports"; "types" resolves a library to its declarations, which is
    // enough to name it. Symlinks (pnpm's workspace links) resolve to the real packages/x path.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
