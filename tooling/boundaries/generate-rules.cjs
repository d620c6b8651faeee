// Turns the boundary table (table.cjs) into dependency-cruiser `forbidden` rules. No rule here
// names a package: every per-package rule comes from a row. See README.md for the rule names.
//
// Path conventions, shared by the real tree and the test fixtures: a package lives in
// `packages/<key>/`, an app in `apps/<key>/`, a tool in `tooling/<key>/`, its run-time code in
// `src/`, its public entry is a target of its package.json "exports" (`src/index.ts` for a row
// whose folder does not exist yet). Every path pattern is anchored with `(?:^|/)` so a tree
// under another root (the fixtures) matches the same rules, and every workspace import is
// matched both by its resolved path (`packages/x/`) and by its bare name (`@veetbot/x`): a bare
// name that does not resolve would otherwise slip past a path-only rule (STYLE.md, "the traps
// others fell into").

'use strict';

const fs = require('node:fs');
const path = require('node:path');

class BoundaryTableError extends Error {
  /** @param {string[]} problems */
  constructor(problems) {
    super(`tooling/boundaries/table.cjs is not a complete boundary table:\n  - ${problems.join('\n  - ')}`);
    this.name = 'BoundaryTableError';
    this.problems = problems;
  }
}

const FIELDS = ['kind', 'workspace', 'external', 'builtins', 'typeOnly', 'dev'];
// 'composition': the one composition root the apps share (docs/adr/0022): it lives under apps/
// (it composes the adapters and so reaches their exclusive libraries, as an app does), only apps
// may import it, and it may import packages only — never an app.
// 'test-support': a package of vitest code other packages' tests share (docs/adr/0030, the
// ports' contract kits); only a `dev.workspace` list may name it, so no src/ — and no app's src/
// through ALL_PACKAGES — ever imports it.
// 'tooling': the repository's own tools (tooling/<key>: the boundary gate, the test-gates summary,
// the benchmarks, the shared tsconfig): checked like a package, never shipped; docs/adr/0031.
const KIND_FOLDER = { package: 'packages', app: 'apps', composition: 'apps', 'test-support': 'packages', tooling: 'tooling' };
/** The kinds that live in packages/ and form the package graph. */
const PACKAGE_KINDS = new Set(['package', 'test-support']);

/** A path that is one of ours (packages/, apps/, tooling/) and not inside a node_modules. */
// (Written without nested quantifiers: dependency-cruiser refuses regular expressions it
// cannot prove safe.)
const WORKSPACE_PATH = '^(?!.*node_modules/)(?:|.*/)(?:packages|apps|tooling)/[^/]+/';

function escapeRegExp(value) {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function folderOf(key, row) {
  return `${KIND_FOLDER[row.kind]}/${key}`;
}

/** `packages/x/` anywhere in a path, and the bare `@veetbot/x` (resolved or not). */
function workspacePatterns(table, key) {
  const row = table.rows[key];
  return [`(?:^|/)${escapeRegExp(folderOf(key, row))}/`, `^${escapeRegExp(`${table.scope}/${key}`)}(?:/|$)`];
}

/**
 * A library name ('pg', '@opentelemetry/api', '@opentelemetry/*') as path patterns: the resolved
 * file under any node_modules (pnpm's `.pnpm/<id>/node_modules/<name>/` included), its `@types/`
 * companion, and the bare specifier when it did not resolve. Scoped names are matched anywhere
 * in a path (`(^|/)@modelcontextprotocol/`), an unscoped one only under node_modules so that a
 * source folder called `pg/` is not mistaken for the driver.
 */
function libraryPatterns(name) {
  if (name.startsWith('@')) {
    const [scope, pkg] = name.slice(1).split('/');
    const pkgPattern = pkg === '*' ? '[^/]+' : escapeRegExp(pkg);
    return [
      `(?:^|/)@${escapeRegExp(scope)}/${pkgPattern}(?:/|$)`,
      `(?:^|/)node_modules/@types/${escapeRegExp(scope)}__${pkgPattern}(?:/|$)`,
    ];
  }
  const body = escapeRegExp(name);
  return [`(?:^|/)node_modules/(?:@types/)?${body}(?:/|$)`, `^${body}(?:/|$)`];
}

/** 'crypto' also allows 'node:crypto'; 'fs' also allows 'fs/promises'. */
function builtinPattern(names) {
  return `^(?:node:)?(?:${names.map(escapeRegExp).join('|')})(?:/|$)`;
}

/** Does the allow-list entry `granted` cover the library `name` ('@s/*' covers '@s/x')? */
function covers(granted, name) {
  if (granted === name) return true;
  const scopeOf = (n) => (n.startsWith('@') ? n.split('/')[0] : null);
  if (granted.endsWith('/*') && scopeOf(granted) === scopeOf(name)) return true;
  if (name.endsWith('/*') && scopeOf(granted) === scopeOf(name)) return true;
  return false;
}

function listDirectories(folder) {
  if (!fs.existsSync(folder)) return [];
  return fs
    .readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
    .map((entry) => entry.name);
}

function exportTargets(exportsField) {
  if (typeof exportsField === 'string') return [exportsField];
  if (exportsField === null || typeof exportsField !== 'object') return [];
  return Object.values(exportsField).flatMap(exportTargets);
}

/** Every problem with the table, checked against the folders that exist under repoRoot. */
function findProblems(table, repoRoot) {
  const problems = [];
  const rows = table.rows ?? {};
  const keys = Object.keys(rows);

  const checkWorkspaceList = (key, field, list) => {
    if (list === table.ALL_PACKAGES) return;
    if (!Array.isArray(list)) {
      problems.push(`${key}: ${field} must be a list of row keys or ALL_PACKAGES`);
      return;
    }
    for (const target of list) {
      if (!(target in rows)) problems.push(`${key}: ${field} names "${target}", which has no row`);
      else if (rows[target].kind === 'composition' && rows[key]?.kind !== 'app')
        problems.push(`${key}: ${field} names the composition "${target}"; only an app may import it`);
      else if (rows[target].kind === 'app') problems.push(`${key}: ${field} names the app "${target}"; nothing may import an app`);
      else if (rows[target].kind === 'test-support' && field !== 'dev.workspace')
        problems.push(`${key}: ${field} names the test support "${target}"; only a dev.workspace list may`);
      else if (rows[target].kind === 'tooling' && field !== 'dev.workspace')
        problems.push(`${key}: ${field} names the tooling "${target}"; only code outside src/ (dev.workspace) may import it`);
      else if (target === key) problems.push(`${key}: ${field} names the package itself`);
    }
  };

  for (const key of keys) {
    const row = rows[key];
    const missing = FIELDS.filter((field) => row?.[field] === undefined);
    if (missing.length > 0) {
      problems.push(`${key}: missing ${missing.join(', ')}`);
      continue;
    }
    if (!(row.kind in KIND_FOLDER)) problems.push(`${key}: kind must be 'package', 'app', 'composition', 'test-support' or 'tooling'`);
    if (row.kind === 'tooling' && (row.workspace === table.ALL_PACKAGES || row.external === table.ANY))
      problems.push(`${key}: a tooling row lists what it imports (no ALL_PACKAGES, no ANY)`);
    checkWorkspaceList(key, 'workspace', row.workspace);
    if (row.external !== table.ANY && !Array.isArray(row.external))
      problems.push(`${key}: external must be a list of library names or ANY`);
    if (row.builtins !== table.ALL_BUILTINS && !Array.isArray(row.builtins))
      problems.push(`${key}: builtins must be a list of module names or ALL_BUILTINS`);
    if (typeof row.typeOnly !== 'boolean') problems.push(`${key}: typeOnly must be true or false`);
    if (!Array.isArray(row.dev?.workspace) || !Array.isArray(row.dev?.external)) {
      problems.push(`${key}: dev must be { workspace: [...], external: [...] }`);
    } else {
      checkWorkspaceList(key, 'dev.workspace', row.dev.workspace);
    }
  }

  // An exclusive library is named in its owner's row and nowhere else.
  for (const exclusive of table.exclusiveLibraries ?? []) {
    if (!(exclusive.owner in rows)) problems.push(`exclusive library rule ${exclusive.rule}: owner "${exclusive.owner}" has no row`);
    for (const key of keys) {
      // A tool measures a library bare (the benchmarks' baselines): it names it in its own row,
      // visibly; shipped code still reaches it only through the owner (docs/adr/0031).
      if (key === exclusive.owner || rows[key]?.kind === 'tooling') continue;
      const granted = [
        ...(Array.isArray(rows[key]?.external) ? rows[key].external : []),
        ...(Array.isArray(rows[key]?.dev?.external) ? rows[key].dev.external : []),
      ];
      for (const library of exclusive.libraries) {
        for (const entry of granted) {
          if (covers(entry, library)) problems.push(`${key}: external names "${entry}", which only ${exclusive.owner} may use`);
        }
      }
    }
  }

  // The allowed package graph (tests included) must be acyclic, or a cycle between packages
  // could be built entirely out of allowed edges.
  const edges = (key) => {
    const row = rows[key];
    if (!row || (!PACKAGE_KINDS.has(row.kind) && row.kind !== 'tooling')) return [];
    const lists = [row.workspace, row.dev?.workspace].filter(Array.isArray);
    return lists.flat().filter((target) => target in rows);
  };
  const state = new Map();
  const visit = (key, trail) => {
    if (state.get(key) === 'done') return;
    if (state.get(key) === 'active') {
      problems.push(`the table allows a cycle: ${[...trail.slice(trail.indexOf(key)), key].join(' -> ')}`);
      return;
    }
    state.set(key, 'active');
    for (const target of edges(key)) visit(target, [...trail, key]);
    state.set(key, 'done');
  };
  for (const key of keys.filter((k) => PACKAGE_KINDS.has(rows[k]?.kind) || rows[k]?.kind === 'tooling')) visit(key, []);

  // Every folder that exists has a row of the right kind and the npm name the rules expect.
  for (const folder of new Set(Object.values(KIND_FOLDER))) {
    for (const name of listDirectories(path.join(repoRoot, folder))) {
      const row = rows[name];
      if (!row) {
        problems.push(`${folder}/${name} has no row (add one before its code can pass the gate)`);
        continue;
      }
      if (KIND_FOLDER[row.kind] !== folder) problems.push(`${folder}/${name}: its row says kind '${row.kind}'`);
      const manifest = path.join(repoRoot, folder, name, 'package.json');
      if (fs.existsSync(manifest)) {
        const { name: npmName } = JSON.parse(fs.readFileSync(manifest, 'utf8'));
        if (npmName !== `${table.scope}/${name}`)
          problems.push(`${folder}/${name}/package.json is named "${npmName}", not "${table.scope}/${name}"`);
      }
    }
  }
  return problems;
}

/** The public entry files of a row: its package.json "exports" targets, or src/index.ts. */
function entryPatterns(table, key, repoRoot) {
  const folder = folderOf(key, table.rows[key]);
  const manifest = path.join(repoRoot, folder, 'package.json');
  let targets = ['./src/index.ts'];
  if (fs.existsSync(manifest)) {
    const found = exportTargets(JSON.parse(fs.readFileSync(manifest, 'utf8')).exports);
    if (found.length > 0) targets = found;
  }
  return targets.map((target) => `(?:^|/)${escapeRegExp(folder)}/${escapeRegExp(target.replace(/^\.\//, ''))}$`);
}

function allowedWorkspaceKeys(table, row, extra) {
  const base =
    row.workspace === table.ALL_PACKAGES ? Object.keys(table.rows).filter((key) => table.rows[key].kind === 'package') : [...row.workspace];
  // Every app may import the shared composition root(s); nothing else may.
  if (row.kind === 'app') base.push(...Object.keys(table.rows).filter((key) => table.rows[key].kind === 'composition'));
  return [...new Set([...base, ...extra])];
}

function exclusivePatternsNotOwnedBy(table, key) {
  return (table.exclusiveLibraries ?? [])
    .filter((exclusive) => exclusive.owner !== key)
    .flatMap((exclusive) => exclusive.libraries.flatMap(libraryPatterns));
}

/** The three (or four) allow-list rules of one zone (src/ or the rest) of one row. */
function zoneRules(table, key, zone) {
  const row = table.rows[key];
  const folder = `(?:^|/)${escapeRegExp(folderOf(key, row))}/`;
  const from = zone === 'src' ? { path: `${folder}src/` } : { path: folder, pathNot: `${folder}src/` };
  const where = zone === 'src' ? `${folderOf(key, row)}/src` : `${folderOf(key, row)} outside src/ (tests, tooling)`;
  const devExtras = zone === 'src' ? { workspace: [], external: [] } : row.dev;
  const rules = [];
  const name = (what) => `${key}:${zone}:${what}`;

  const workspace = allowedWorkspaceKeys(table, row, devExtras.workspace);
  rules.push({
    name: name('workspace'),
    comment: `${where} may import only these workspace packages: ${workspace.join(', ') || '(none)'}. (tooling/boundaries/table.cjs)`,
    severity: 'error',
    from,
    to: {
      path: [WORKSPACE_PATH, `^${escapeRegExp(table.scope)}/`],
      pathNot: [key, ...workspace].flatMap((target) => workspacePatterns(table, target)),
    },
  });

  if (row.external === table.ANY) {
    const forbidden = exclusivePatternsNotOwnedBy(table, key);
    if (forbidden.length > 0) {
      rules.push({
        name: name('external'),
        comment: `${where} may import any library except one another package owns exclusively. (tooling/boundaries/table.cjs)`,
        severity: 'error',
        from,
        to: { path: forbidden },
      });
    }
  } else {
    const libraries = [...row.external, ...devExtras.external, ...(zone === 'src' ? [] : table.testAllowances.external)];
    rules.push({
      name: name('external'),
      comment: `${where} may import only these libraries: ${libraries.join(', ') || '(none)'}; nothing outside the workspace packages either. (tooling/boundaries/table.cjs)`,
      severity: 'error',
      from,
      to: {
        dependencyTypesNot: ['core'],
        pathNot: [
          WORKSPACE_PATH,
          `^${escapeRegExp(table.scope)}/`,
          // A relative import that did not resolve is not a library; not-to-unresolvable has it.
          '^\\.{1,2}/',
          ...libraries.flatMap(libraryPatterns),
        ],
      },
    });
  }

  const builtins = zone === 'src' ? row.builtins : table.testAllowances.builtins;
  if (builtins !== table.ALL_BUILTINS) {
    rules.push({
      name: name('node-builtin'),
      comment: `${where} may import only these Node built-ins: ${builtins.join(', ') || '(none)'}. (tooling/boundaries/table.cjs)`,
      severity: 'error',
      from,
      to: builtins.length > 0 ? { dependencyTypes: ['core'], pathNot: builtinPattern(builtins) } : { dependencyTypes: ['core'] },
    });
  }

  if (zone === 'src' && row.typeOnly) {
    rules.push({
      name: name('type-only'),
      comment: `${where} holds interfaces only: everything it imports from outside itself must be \`import type\`. (tooling/boundaries/table.cjs)`,
      severity: 'error',
      from,
      to: { pathNot: workspacePatterns(table, key), dependencyTypesNot: ['type-only'] },
    });
  }
  return rules;
}

/** Rules over the whole graph that every tree gets, parameterised by the table. */
function graphRules(table, repoRoot) {
  const keys = Object.keys(table.rows);
  const listed = (kind) =>
    keys
      .filter((key) => table.rows[key].kind === kind)
      .map(escapeRegExp)
      .join('|');
  const appKeys = keys.filter((key) => ['app', 'composition'].includes(table.rows[key].kind));

  const rules = [
    {
      name: 'not-to-unresolvable',
      comment: 'An import that does not resolve is an error: an unresolved name passes path rules silently.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'not-in-boundary-table',
      comment: 'Code in a package, app or tooling folder the boundary table has no row for: add a row to tooling/boundaries/table.cjs.',
      severity: 'error',
      from: {
        path: [
          `^(?!.*node_modules/)(?:|.*/)packages/(?!(?:${[listed('package'), listed('test-support')].filter(Boolean).join('|')})/)[^/]+/`,
          `^(?!.*node_modules/)(?:|.*/)apps/(?!(?:${[listed('app'), listed('composition')].filter(Boolean).join('|')})/)[^/]+/`,
          `^(?!.*node_modules/)(?:|.*/)tooling/(?!(?:${listed('tooling') || '(?!)'})/)[^/]+/`,
        ],
      },
      to: {},
    },
    {
      name: 'no-circular-between-packages',
      comment: 'A dependency cycle that leaves its package: packages form a DAG.',
      severity: 'error',
      from: { path: '(?:^|/)((?:packages|apps|tooling)/[^/]+)/' },
      to: { circular: true, via: { pathNot: '(?:^|/)$1/' } },
    },
    {
      name: 'not-to-another-package-internals',
      comment: 'Another package is reached through its public entry (package.json "exports") only.',
      severity: 'error',
      from: { path: '(?:^|/)((?:packages|apps|tooling)/[^/]+)/' },
      to: {
        path: WORKSPACE_PATH,
        pathNot: ['(?:^|/)$1/', ...keys.flatMap((key) => entryPatterns(table, key, repoRoot))],
      },
    },
    {
      name: 'no-package-reaches-an-app',
      comment: 'Apps are the composition roots; no package reaches one, directly or transitively.',
      severity: 'error',
      from: { path: '(?:^|/)packages/' },
      to: {
        path: ['(?:^|/)apps/[^/]+/', ...appKeys.flatMap((key) => workspacePatterns(table, key))],
        reachable: true,
      },
    },
  ];

  for (const exclusive of table.exclusiveLibraries ?? []) {
    rules.push({
      name: exclusive.rule,
      comment: `Nothing in packages/ outside ${folderOf(exclusive.owner, table.rows[exclusive.owner])} reaches ${exclusive.libraries.join(', ')}, directly or through a helper (apps compose the owner and are exempt).`,
      severity: 'error',
      from: {
        path: '(?:^|/)packages/',
        pathNot: `(?:^|/)${escapeRegExp(folderOf(exclusive.owner, table.rows[exclusive.owner]))}/`,
      },
      to: { path: exclusive.libraries.flatMap(libraryPatterns), reachable: true },
    });
  }
  return rules;
}

/**
 * The complete `forbidden` list for dependency-cruiser.
 * @param {object} table the export of table.cjs
 * @param {{ repoRoot: string }} options the folder holding packages/ and apps/
 */
function generateForbiddenRules(table, { repoRoot }) {
  const problems = findProblems(table, repoRoot);
  if (problems.length > 0) throw new BoundaryTableError(problems);
  const perRow = Object.keys(table.rows).flatMap((key) => [...zoneRules(table, key, 'src'), ...zoneRules(table, key, 'dev')]);
  return [...graphRules(table, repoRoot), ...perRow];
}

module.exports = {
  BoundaryTableError,
  generateForbiddenRules,
  findProblems,
  libraryPatterns,
};
