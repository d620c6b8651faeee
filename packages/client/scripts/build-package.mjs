// The installable form of @veetbot/client (docs/adr/0071): dist/ is a complete npm package —
// an ESM bundle, one rolled-up .d.ts, its own package.json, README and LICENSE — and `npm pack
// dist` makes the tarball. The workspace keeps importing src/ (package.json "exports"); only what
// leaves the repository is built. Plain JavaScript, so `node scripts/build-package.mjs` needs no
// TypeScript loader.
//
//   node scripts/build-package.mjs                          build dist/
//   node scripts/build-package.mjs --out <dir>              build into <dir> instead
//   node scripts/build-package.mjs --pack <dir>             build dist/, then `npm pack` it into <dir>
//   node scripts/build-package.mjs --update-surface         build, then write public-surface.api.md
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateDtsBundle } from 'dts-bundle-generator';
import { build } from 'esbuild';

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(PACKAGE, 'package.json'));

/**
 * The npm libraries the published client imports at run time. Everything else it reaches
 * (@veetbot/domain: the wire's enums and limits) is bundled in, so the tarball names no package
 * that exists only in this workspace. zod is pinned to the exact version the workspace builds
 * and tests against: the .d.ts is zod's types as that version spells them.
 */
const RUNTIME_DEPENDENCIES = ['zod'];

/**
 * The surface file: dist/index.d.ts as a Markdown report, committed (test/published-surface.test.ts
 * compares). Markdown so no formatter rewrites the generated text, and a review reads it as a page.
 */
export const SURFACE_FILE = join(PACKAGE, 'public-surface.api.md');
const SURFACE_REPORT = 'surface.api.md';

function surfaceReport(declarations) {
  return [
    '# @veetbot/client: the published surface',
    '',
    'Generated from `dist/index.d.ts` by `npx -y pnpm@10.34.8 --filter @veetbot/client surface:update`',
    '(docs/adr/0071); `test/published-surface.test.ts` fails when the package declares anything else.',
    'Do not edit by hand: change `src/`, run the command, and commit this file with the change.',
    '',
    '```ts',
    declarations.trimEnd(),
    '```',
    '',
  ].join('\n');
}

function argument(name) {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

/**
 * @veetbot/domain's modules declare schemas and constants and do nothing else when loaded, so
 * what the client does not reach is left out of the bundle (its hashing helpers and their
 * node:crypto with them). esbuild cannot know that of a call like `z.object(...)` by itself.
 */
const domainWithoutSideEffects = {
  name: 'domain-without-side-effects',
  setup(b) {
    const domainSource = `${join(PACKAGE, '..', 'domain', 'src')}/`;
    // A domain module that is kept may still import a hashing helper it never calls here:
    // node's modules have no load-time effects, so an unused import of one is dropped too.
    b.onResolve({ filter: /^node:/ }, (args) => ({ path: args.path, external: true, sideEffects: false }));
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData?.resolving) return undefined;
      const resolved = await b.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: { resolving: true },
      });
      if (resolved.errors.length > 0 || resolved.external || !resolved.path.startsWith(domainSource)) return undefined;
      return { path: resolved.path, sideEffects: false };
    });
  },
};

async function bundleJavaScript(out) {
  await build({
    absWorkingDir: PACKAGE,
    entryPoints: ['src/index.ts'],
    outfile: join(out, 'index.js'),
    bundle: true,
    // Neutral: the client needs only fetch, TextDecoder and AbortSignal, which Node 20, Deno,
    // Bun and browsers all have as globals; a node: import would fail this build, not a user.
    platform: 'neutral',
    format: 'esm',
    target: 'es2022',
    mainFields: ['module', 'main'],
    conditions: ['import', 'default'],
    external: RUNTIME_DEPENDENCIES,
    plugins: [domainWithoutSideEffects],
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const text = await readFile(join(out, 'index.js'), 'utf8');
  const stray = /\bfrom\s*["'](node:[^"']+)["']/.exec(text);
  if (stray !== null) throw new Error(`the client bundle imports ${stray[1]}: it must run wherever fetch does`);
}

/** One .d.ts: the client's declarations with @veetbot/domain's inlined and zod's imported. */
function bundleDeclarations() {
  const [text] = generateDtsBundle(
    [
      {
        filePath: join(PACKAGE, 'src/index.ts'),
        libraries: { inlinedLibraries: ['@veetbot/domain'], importedLibraries: RUNTIME_DEPENDENCIES },
        output: { noBanner: true, sortNodes: true, exportReferencedTypes: false },
      },
    ],
    { preferredConfigPath: join(PACKAGE, 'tsconfig.build.json') },
  );
  if (text === undefined) throw new Error('dts-bundle-generator produced no declarations');
  return text;
}

async function manifest() {
  const source = JSON.parse(await readFile(join(PACKAGE, 'package.json'), 'utf8'));
  const dependencies = {};
  for (const name of RUNTIME_DEPENDENCIES)
    dependencies[name] = JSON.parse(await readFile(require.resolve(`${name}/package.json`), 'utf8')).version;
  return {
    name: source.name,
    version: source.version,
    description: source.description,
    license: source.license,
    type: 'module',
    engines: source.engines,
    sideEffects: false,
    exports: {
      '.': { types: './index.d.ts', import: './index.js', default: './index.js' },
      './package.json': './package.json',
    },
    main: './index.js',
    types: './index.d.ts',
    files: ['index.js', 'index.d.ts', 'README.md', 'LICENSE'],
    dependencies,
  };
}

/**
 * Builds the package into `out` (emptied first), and beside its files the surface report (not in
 * the manifest's `files`, so never packed); returns the report.
 */
export async function buildPackage(out) {
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  await bundleJavaScript(out);
  const declarations = bundleDeclarations();
  await writeFile(join(out, 'index.d.ts'), declarations);
  await writeFile(join(out, 'package.json'), `${JSON.stringify(await manifest(), null, 2)}\n`);
  await copyFile(join(PACKAGE, 'README.md'), join(out, 'README.md'));
  await copyFile(join(PACKAGE, 'LICENSE'), join(out, 'LICENSE'));
  const report = surfaceReport(declarations);
  await writeFile(join(out, SURFACE_REPORT), report);
  return report;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = resolve(argument('--out') ?? join(PACKAGE, 'dist'));
  const report = await buildPackage(out);
  if (process.argv.includes('--update-surface')) await writeFile(SURFACE_FILE, report);
  const destination = argument('--pack');
  if (destination !== undefined) {
    await mkdir(destination, { recursive: true });
    // npm, not pnpm: the tarball is what `npm publish` would upload, with no workspace rewriting.
    const packed = JSON.parse(
      execFileSync('npm', ['pack', out, '--pack-destination', resolve(destination), '--json'], { encoding: 'utf8' }),
    );
    process.stdout.write(`${join(resolve(destination), packed[0].filename)}\n`);
  }
}
