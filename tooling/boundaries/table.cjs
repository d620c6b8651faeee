// The import-boundary table: ARCHITECTURE.md § Import boundaries and the specification's
// "Ports, adapters, and what may import what", as data. Hard gate 6
// (gate.structure.import_boundary) and hard gate 13 are checked against it by
// dependency-cruiser; `.dependency-cruiser.cjs` generates every per-package rule from this file
// (see generate-rules.cjs). Nothing here is a rule by itself: edit the data, not the rules.
//
// Semantics: ALLOW-LIST. A row names what a package's code may import; everything else is
// forbidden. A directory under packages/ or apps/ without a row, a row missing a field, a
// reference to an unknown row, or a cycle between rows is an error when the rules are generated.
// tooling/ is covered too (docs/adr/0031): a folder under tooling/ without a row is an error.
// ARCHITECTURE.md: "the boundary table below may only get stricter".
//
// Fields of a row:
//   kind         'package' (lives in packages/<key>), 'app' (lives in apps/<key>),
//                'composition' (lives in apps/<key>: shared composition code only apps import) or
//                'test-support' (lives in packages/<key>: vitest code only other rows'
//                `dev.workspace` may name; ALL_PACKAGES leaves it out) or
//                'tooling' (lives in tooling/<key>: the repository's own tools, never shipped;
//                only code outside src/ may import one, through a row's dev.workspace; a tooling
//                row lists what it imports, no ALL_PACKAGES or ANY).
//   workspace    keys of the rows its src/ may import, or ALL_PACKAGES (apps only: every
//                'package' row, never another app — apps are the only composition roots).
//   external     npm libraries its src/ may import ('@scope/*' for a whole scope), or ANY (apps):
//                anything except a library another row owns exclusively (see below).
//                A library's `@types/...` companion is implied.
//   builtins     Node built-in modules its src/ may import ('fs' also allows 'fs/promises'; the
//                'node:' prefix is implied), or ALL_BUILTINS.
//   typeOnly     true: every import src/ makes outside its own package must be `import type`
//                (an `import { type X }` still loads the module at run time under
//                verbatimModuleSyntax, so it does not count).
//   dev          extra allowances for the package's code outside src/ (test/**, *.config.ts,
//                scripts): { workspace, external }. See TEST_ALLOWANCES.
//
// Choices the architecture table leaves open, decided here:
//  - zod and node:crypto are what domain may use, and domain's types ARE zod schemas, so every
//    row may import zod and node:crypto — except ports, which is interfaces only.
//  - ports: no run-time import at all (STYLE.md: "a port as a documented type with no runtime
//    code"); `import type` from domain is its only way out of the package.
//  - Node stdlib: all of it for tools-builtin (the table says so), the I/O edges
//    (sandbox-adapter: "their own library" is node stdlib; store-postgres, mcp-adapter,
//    telemetry: files, sockets, DNS for the egress check) and apps. None beyond node:crypto for
//    the pure middle (validation, registry, policy, executor, runtime, client): AbortSignal,
//    timers, fetch, TextEncoder and crypto.randomUUID are globals and need no import.
//  - validation may use ajv-formats, ajv's own format plug-in, beside ajv.
//  - mcp-adapter may use the client side of the SDK's v2 line (`@modelcontextprotocol/client`,
//    `/core`), never the server side (the gateway's) nor the 1.x package (docs/adr/0044).
//  - client (not in the architecture table): the typed HTTP client of the API; it speaks the
//    wire types, so domain and zod, nothing else.
//  - Tests and tooling (everything in a package outside src/) may import what src/ may, plus
//    vitest, fast-check and all of Node stdlib, plus the row's `dev` extras. They may NOT import
//    other workspace packages beyond the row's own list: a test composes the package with what
//    the package itself may see, and fakes the rest through ports. A row whose tests need a
//    sibling's real implementation says so in dev.workspace, visibly (executor and registry do:
//    they test against the real validator, registry and policy engine). The whole-graph rules
//    (exclusive libraries, apps) bind tests too.
//  - Everyone reaches other packages through their public entry only (the targets of their
//    package.json "exports"), never `../../x/src/internal` ("registry internals").

'use strict';

const ALL_PACKAGES = Symbol.for('veetbot.boundaries.all-packages');
const ANY = Symbol.for('veetbot.boundaries.any-library');
const ALL_BUILTINS = Symbol.for('veetbot.boundaries.all-builtins');

/** What the domain level brings with it, granted to every row but ports (see above). */
const DOMAIN_LEVEL = { external: ['zod'], builtins: ['crypto'] };

/** Every package's tests and tooling may also import these (on top of the row's own list). */
const TEST_ALLOWANCES = {
  external: ['vitest', 'fast-check'],
  builtins: ALL_BUILTINS,
};

const NO_DEV = { workspace: [], external: [] };

/**
 * The MCP SDK, split by side (docs/adr/0044). mcp-adapter (the client) owns the 2.x client with
 * the 2.x core; mcp-gateway owns the 2.x server. Neither may import the other's side, and nothing
 * else in packages/ reaches either (hard gate 13). The 1.x `@modelcontextprotocol/sdk` (both
 * sides in one package) is no package's any more ("The client adapter moved"): it stays in the
 * adapter's exclusive rule, so nothing in packages/ may import it, and the adapter's own row no
 * longer names it. Tooling may (the benchmarks' raw 1.x baseline); the integration tests'
 * scripted servers run it as processes, outside the gate.
 */
const MCP_CLIENT_SDK = ['@modelcontextprotocol/client', '@modelcontextprotocol/core'];
const MCP_SDK_1X = ['@modelcontextprotocol/sdk'];
const MCP_SERVER_SDK = ['@modelcontextprotocol/server'];

/** A tool with no src/: nothing may be imported from a src/ it does not have (docs/adr/0031). */
const NOTHING_IN_SRC = {
  kind: 'tooling',
  workspace: [],
  external: [],
  builtins: [],
  typeOnly: false,
  dev: NO_DEV,
};

/** A vitest.config.ts that leaves postgres-only.json's files out without DATABASE_URL (ADR 0026). */
const TEST_GATES_DEV = { workspace: ['test-gates'], external: [] };

const rows = {
  domain: {
    kind: 'package',
    workspace: [],
    external: [...DOMAIN_LEVEL.external],
    builtins: [...DOMAIN_LEVEL.builtins],
    typeOnly: false,
    dev: NO_DEV,
  },
  ports: {
    kind: 'package',
    workspace: ['domain'],
    external: [],
    builtins: [],
    typeOnly: true,
    dev: NO_DEV,
  },
  validation: {
    kind: 'package',
    workspace: ['domain'],
    external: [...DOMAIN_LEVEL.external, 'ajv', 'ajv-formats'],
    builtins: [...DOMAIN_LEVEL.builtins],
    typeOnly: false,
    dev: NO_DEV,
  },
  registry: {
    kind: 'package',
    workspace: ['domain', 'ports'],
    external: [...DOMAIN_LEVEL.external],
    builtins: [...DOMAIN_LEVEL.builtins],
    typeOnly: false,
    // Registration validation (hard gate 1: dialect, no remote $ref) is tested against the real
    // ajv validator; src/ still sees it only as ports.SchemaValidator.
    dev: { workspace: ['validation'], external: [] },
  },
  policy: {
    kind: 'package',
    workspace: ['domain', 'ports'],
    external: [...DOMAIN_LEVEL.external],
    builtins: [...DOMAIN_LEVEL.builtins],
    typeOnly: false,
    dev: NO_DEV,
  },
  executor: {
    kind: 'package',
    workspace: ['domain', 'ports'],
    external: [...DOMAIN_LEVEL.external, '@opentelemetry/api'],
    builtins: [...DOMAIN_LEVEL.builtins],
    typeOnly: false,
    // The pipeline's tests drive steps 1-14 over the real registry, validator, policy engine
    // and builtins ("real parts where a user would have real ones"); src/ still sees ports only.
    dev: { workspace: ['validation', 'registry', 'policy', 'tools-builtin'], external: [] },
  },
  runtime: {
    kind: 'package',
    workspace: ['domain', 'ports', 'executor', 'registry', 'policy'],
    external: [...DOMAIN_LEVEL.external, '@opentelemetry/api'],
    builtins: [...DOMAIN_LEVEL.builtins],
    typeOnly: false,
    dev: NO_DEV,
  },
  'tools-builtin': {
    kind: 'package',
    workspace: ['domain', 'ports'],
    external: [...DOMAIN_LEVEL.external],
    builtins: ALL_BUILTINS,
    typeOnly: false,
    // The workspace tools are tested through the real confined workspace helper (docs/adr/0058):
    // src/ sees it only as ports.WorkspaceFiles.
    dev: { workspace: ['sandbox-adapter'], external: [] },
  },
  'mcp-adapter': {
    kind: 'package',
    workspace: ['domain', 'ports'],
    external: [...DOMAIN_LEVEL.external, ...MCP_CLIENT_SDK, '@opentelemetry/api'],
    builtins: ALL_BUILTINS,
    typeOnly: false,
    // Discovery admits every remote input schema; the tests admit them with the real ajv
    // validator (as registry's do), while src/ sees it only as ports.SchemaValidator. The
    // adapter, its egress policies and its tests' broker run the ports' contract kits (docs/adr/0030).
    dev: { workspace: ['validation', 'port-contracts'], external: [] },
  },
  // The MCP gateway face (docs/adr/0044): a session's pinned tools served to MCP clients. The
  // only package that may import the SDK's server side; it sees the runtime only as
  // ports.GatewayRuntime (the api implements it over the one pipeline). The tests that drive it
  // with the SDK's own client are the api's: no package may reach the client side but the adapter.
  'mcp-gateway': {
    kind: 'package',
    workspace: ['domain', 'ports'],
    external: [...DOMAIN_LEVEL.external, ...MCP_SERVER_SDK],
    builtins: [...DOMAIN_LEVEL.builtins],
    typeOnly: false,
    dev: NO_DEV,
  },
  // The Sandbox port over bubblewrap (docs/adr/0037): child processes, files, /proc; the
  // sandbox.execute span (§ Spans) is its own, so it names the OpenTelemetry API as executor does.
  'sandbox-adapter': {
    kind: 'package',
    workspace: ['domain', 'ports'],
    external: [...DOMAIN_LEVEL.external, '@opentelemetry/api'],
    builtins: ALL_BUILTINS,
    typeOnly: false,
    dev: NO_DEV,
  },
  // The browser tools' provider (docs/adr/0079): Debian's chromium through playwright-core,
  // inside bubblewrap's namespaces (child processes, files), its only way out an HTTP proxy on a
  // unix socket (http, net, stream) that applies ports.EgressPolicy per request. Its tests judge
  // destinations with the real egress policy the MCP adapter implements (src/ sees the port only).
  'browser-provider': {
    kind: 'package',
    workspace: ['domain', 'ports'],
    external: [...DOMAIN_LEVEL.external, 'playwright-core'],
    builtins: [...DOMAIN_LEVEL.builtins, 'fs', 'http', 'net', 'os', 'path', 'stream'],
    typeOnly: false,
    dev: { workspace: ['mcp-adapter'], external: [] },
  },
  // Artifact bytes in a folder (§ Output: limits, truncation, and artifacts): files, paths and
  // hashes only; the metadata row goes through ports.ArtifactStore, never a driver.
  'blob-store-folder': {
    kind: 'package',
    workspace: ['domain', 'ports'],
    external: [...DOMAIN_LEVEL.external],
    builtins: [...DOMAIN_LEVEL.builtins, 'fs', 'path'],
    typeOnly: false,
    // Its BlobStore and its tests' in-memory ArtifactStore run the ports' contract kits (docs/adr/0030).
    dev: { workspace: ['port-contracts'], external: [] },
  },
  // The default credential broker (RULINGS.md "Credentials"): reads `file:` references and the
  // process environment (a global, no import); nothing else.
  'credential-broker': {
    kind: 'package',
    workspace: ['domain', 'ports'],
    external: [...DOMAIN_LEVEL.external],
    builtins: [...DOMAIN_LEVEL.builtins, 'fs', 'path'],
    typeOnly: false,
    // Its resolvers run the CredentialResolver contract kit (docs/adr/0030).
    dev: { workspace: ['port-contracts'], external: [] },
  },
  'store-postgres': {
    kind: 'package',
    workspace: ['domain', 'ports'],
    external: [...DOMAIN_LEVEL.external, 'drizzle-orm', 'pg', '@electric-sql/pglite'],
    builtins: ALL_BUILTINS,
    typeOnly: false,
    // drizzle-kit generates the migrations: a tool, never shipped code. Its ArtifactStore runs
    // the port's contract kit (docs/adr/0030); vitest.config.ts reads postgres-only.json through
    // test-gates (ADR 0026).
    dev: { workspace: ['port-contracts', 'test-gates'], external: ['drizzle-kit'] },
  },
  // Contract test kits (docs/adr/0030): one vitest suite per port with more than one
  // implementation, run by the tests of each. Test support, so its src/ may import vitest; it
  // sees the port types and the domain's typed errors, nothing else. Only `dev.workspace` lists
  // may name it (the generator refuses it anywhere else): no src/, an app's included, imports it.
  'port-contracts': {
    kind: 'test-support',
    workspace: ['domain', 'ports'],
    external: ['vitest'],
    builtins: ['crypto', 'util'],
    typeOnly: false,
    dev: NO_DEV,
  },
  // Its own libraries: the three signals' — OpenTelemetry (traces), prom-client (metrics), pino
  // and pino-pretty (the structured log, docs/adr/0069).
  telemetry: {
    kind: 'package',
    workspace: ['domain', 'ports'],
    external: [...DOMAIN_LEVEL.external, '@opentelemetry/*', 'prom-client', 'pino', 'pino-pretty'],
    builtins: ALL_BUILTINS,
    typeOnly: false,
    dev: NO_DEV,
  },
  client: {
    kind: 'package',
    workspace: ['domain'],
    external: [...DOMAIN_LEVEL.external],
    builtins: [...DOMAIN_LEVEL.builtins],
    typeOnly: false,
    // scripts/build-package.mjs builds the installable package (docs/adr/0071).
    dev: { workspace: [], external: ['esbuild', 'dts-bundle-generator'] },
  },
  // The one composition root the apps share (docs/adr/0022): settings, the composed system, the
  // process runner and operator tooling (tenants, keys). Lives in apps/composition because it
  // composes the adapters (and so reaches their exclusive libraries, as an app does); every app
  // may import it, no package may, and it imports packages only — never an app.
  composition: {
    kind: 'composition',
    workspace: ALL_PACKAGES,
    external: ANY,
    builtins: ALL_BUILTINS,
    typeOnly: false,
    // vitest.config.ts reads postgres-only.json through test-gates (ADR 0026).
    dev: TEST_GATES_DEV,
  },
  // apps/*: "anything: they are the only composition roots" — but not each other, and not a
  // library another row owns exclusively (they reach it through the owning adapter).
  api: {
    kind: 'app',
    workspace: ALL_PACKAGES,
    external: ANY,
    builtins: ALL_BUILTINS,
    typeOnly: false,
    // The /mcp tests drive the gateway with the SDK's own client (docs/adr/0044); vitest.config.ts
    // reads postgres-only.json through test-gates (ADR 0026).
    // The conformance suite drives the gateway face (docs/adr/0059).
    dev: { workspace: ['mcp-test-client', 'test-gates', 'conformance'], external: [] },
  },
  worker: {
    kind: 'app',
    workspace: ALL_PACKAGES,
    external: ANY,
    builtins: ALL_BUILTINS,
    typeOnly: false,
    // vitest.config.ts reads postgres-only.json through test-gates (ADR 0026).
    dev: TEST_GATES_DEV,
  },
  // Cross-package integration tests (docs/adr/0006): a composition root like the apps, so it
  // may compose store-postgres and reach its drivers; no package may import it.
  'integration-tests': {
    kind: 'app',
    workspace: ALL_PACKAGES,
    external: ANY,
    builtins: ALL_BUILTINS,
    typeOnly: false,
    // vitest.config.ts reads postgres-only.json through test-gates (ADR 0026); gate 11 drives
    // the MCP gateway face with the SDK's own client (docs/adr/0044).
    dev: { workspace: ['test-gates', 'mcp-test-client', 'pg-cluster'], external: [] },
  },
  cli: {
    kind: 'app',
    workspace: ALL_PACKAGES,
    external: ANY,
    builtins: ALL_BUILTINS,
    typeOnly: false,
    // vitest.config.ts reads postgres-only.json through test-gates (ADR 0026); the conformance
    // suite drives `veetbot mcp check` as its client (docs/adr/0059).
    dev: { workspace: ['test-gates', 'conformance'], external: [] },
  },

  // tooling/*: the repository's own tools (docs/adr/0031). Checked like packages, with what each
  // actually imports; nothing in src/ of a package or app may import them.
  //
  // The boundary gate itself: table.cjs and generate-rules.cjs (CommonJS, outside src/, so under
  // the test allowances: Node stdlib) and its tests; no library, no workspace package.
  boundaries: NOTHING_IN_SRC,
  // The summary at the end of `pnpm test` and the postgres-only.json reader every
  // vitest.config.ts shares (ADR 0026): files, a TCP probe, a child process; zod for the manifest.
  'test-gates': {
    kind: 'tooling',
    workspace: [],
    external: [...DOMAIN_LEVEL.external],
    builtins: ['child_process', 'fs', 'net', 'path', 'url'],
    typeOnly: false,
    dev: NO_DEV,
  },
  // The benchmarks (docs/benchmarks.md): a composition root of its own, measured against bare
  // baselines — ajv alone, the MCP SDK's own client, DBOS over pg, Restate (its server binary and
  // SDK, docs/adr/0073) — so it names those libraries itself, the exclusive ones included (tools
  // may; shipped code may not).
  bench: {
    kind: 'tooling',
    workspace: [
      'domain',
      'ports',
      'validation',
      'registry',
      'policy',
      'executor',
      'runtime',
      'tools-builtin',
      'mcp-adapter',
      'store-postgres',
      'blob-store-folder',
      'credential-broker',
      'client',
      // The confined workspace helper the composition builds too (docs/adr/0058).
      'sandbox-adapter',
    ],
    external: [
      ...DOMAIN_LEVEL.external,
      'ajv',
      'pg',
      '@modelcontextprotocol/*',
      '@dbos-inc/dbos-sdk',
      '@restatedev/restate-sdk',
      '@restatedev/restate-server',
    ],
    builtins: [
      'child_process',
      'crypto',
      'diagnostics_channel',
      'events',
      'fs',
      'http2',
      'module',
      'net',
      'os',
      'path',
      'perf_hooks',
      'timers',
      'url',
    ],
    typeOnly: false,
    // vitest.config.ts reads postgres-only.json through test-gates (ADR 0026); bin/bench.ts, the
    // entry outside src/, starts the bench's own throwaway cluster (docs/adr/0072).
    dev: { workspace: ['test-gates', 'pg-cluster'], external: [] },
  },
  // The SDK's own 2.x MCP client, connected over Streamable HTTP, for the tests that drive the
  // gateway face as any MCP client would (docs/adr/0044). A tool: only app tests import it,
  // through dev.workspace (the api's, the integration tests'), so nothing shipped, and nothing in
  // packages/, reaches the client side beside the adapter.
  'mcp-test-client': {
    kind: 'tooling',
    workspace: [],
    external: ['@modelcontextprotocol/client'],
    builtins: [],
    typeOnly: false,
    dev: NO_DEV,
  },
  // The official MCP conformance suite, pinned at both protocol lines, and its runner: the suite
  // runs as child processes (node stdlib only here); the api and cli tests import the runner
  // (docs/adr/0059).
  conformance: {
    kind: 'tooling',
    workspace: [],
    external: [],
    builtins: ['child_process', 'fs', 'os', 'path', 'url'],
    typeOnly: false,
    dev: NO_DEV,
  },
  // A throwaway PostgreSQL cluster the caller owns and a TCP proxy that cuts it off (docs/adr/0067):
  // server binaries as child processes, sockets, files. The resilience suite and the
  // benchmarks import it (docs/adr/0072).
  'pg-cluster': {
    kind: 'tooling',
    workspace: [],
    external: [],
    builtins: ['child_process', 'fs', 'net', 'os', 'path', 'util'],
    typeOnly: false,
    dev: NO_DEV,
  },
  // The shared compiler settings (base.json): no code.
  tsconfig: NOTHING_IN_SRC,
};

/**
 * Libraries exactly one row may touch. Checked twice: directly (no other row's allow-list may
 * name them, and ANY excludes them) and over the whole graph with `reachable: true`
 * (ARCHITECTURE.md: "checked over the whole graph (transitively, not by grep)"; hard gate 13:
 * "the import this catches is transitive through a shared helper"). Apps are exempt from the
 * transitive check only: composing the owning adapter necessarily reaches its library.
 */
const exclusiveLibraries = [
  {
    rule: 'mcp-sdk-only-in-mcp-adapter',
    owner: 'mcp-adapter',
    libraries: [...MCP_CLIENT_SDK, ...MCP_SDK_1X],
  },
  {
    rule: 'mcp-server-sdk-only-in-mcp-gateway',
    owner: 'mcp-gateway',
    libraries: MCP_SERVER_SDK,
  },
  {
    rule: 'database-drivers-only-in-store-postgres',
    owner: 'store-postgres',
    libraries: ['drizzle-orm', 'pg', '@electric-sql/pglite', 'drizzle-kit'],
  },
];

module.exports = {
  scope: '@veetbot',
  rows,
  exclusiveLibraries,
  testAllowances: TEST_ALLOWANCES,
  ALL_PACKAGES,
  ANY,
  ALL_BUILTINS,
};
