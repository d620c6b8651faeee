// Production processes run from built JavaScript (docs/adr/0041): one esbuild bundle per app
// entry, the workspace's TypeScript bundled in, every npm package left external and imported
// from where pnpm installed it. Plain JavaScript with no imports but esbuild's and Node's, so
// `node scripts/build-apps.mjs` needs no TypeScript loader.
//
//   node scripts/build-apps.mjs              build every app
//   node scripts/build-apps.mjs --if-stale   build only when a bundle is missing or older than
//                                            one of the files it was built from
import { readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The processes a user starts: `pnpm start` / `start:api`, `start:worker`, `veetbot`. */
export const APPS = [
  { name: 'api', entry: 'apps/api/src/main.ts', out: 'apps/api/dist/main.mjs' },
  { name: 'worker', entry: 'apps/worker/src/main.ts', out: 'apps/worker/dist/main.mjs' },
  { name: 'cli', entry: 'apps/cli/src/main.ts', out: 'apps/cli/dist/main.mjs' },
];

/**
 * Workspace code is bundled; anything else resolved from node_modules stays an import. pnpm's
 * layout only links an app's own dependencies into its node_modules, and the bundle imports what
 * packages/* depend on too, so each external import is written as the absolute path esbuild
 * resolved it to from its importer: the bundle runs where it was built (install builds it).
 */
const externalNpm = {
  name: 'external-npm',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.path.startsWith('node:') || args.pluginData?.resolving) return undefined;
      const resolved = await b.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: { resolving: true },
      });
      if (resolved.errors.length > 0) return { errors: resolved.errors };
      if (resolved.external || !resolved.path.includes(`${join('node_modules')}/`)) return undefined;
      return { path: pathToFileURL(resolved.path).href, external: true };
    });
  },
};

/**
 * Files the workspace reads at run time next to its source (SQL migrations and functions, the
 * sandbox client, server-everything's folder) are found from `import.meta.url`; in a bundle that
 * would be the bundle's URL, so each workspace module keeps its own source file's URL.
 */
const sourceUrl = {
  name: 'source-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.[cm]?ts$/ }, async (args) => {
      if (args.path.includes(`${join('node_modules')}/`)) return undefined;
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return { contents: text, loader: 'ts' };
      return { contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: 'ts' };
    });
  },
};

async function buildApp(app) {
  const result = await build({
    absWorkingDir: REPO,
    entryPoints: [app.entry],
    outfile: app.out,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    metafile: true,
    // Resolve as Node will at run time: "main" and the exports map's import/node/default, never a bundler-only "module".
    mainFields: ['main'],
    conditions: [],
    logLevel: 'warning',
    plugins: [externalNpm, sourceUrl],
    // A bundled CommonJS helper may call require(); give the ESM bundle one.
    banner: {
      js: "import { createRequire as __veetbotCreateRequire } from 'node:module'; const require = __veetbotCreateRequire(import.meta.url);",
    },
  });
  const inputs = Object.keys(result.metafile.inputs).filter((p) => !p.startsWith('file:'));
  await writeFile(`${app.out}.inputs.json`, `${JSON.stringify(inputs)}\n`);
}

/** Whether `app`'s bundle is missing or older than any file it was built from (or this script). */
async function isStale(app) {
  const mtime = async (p) => (await stat(resolve(REPO, p)).catch(() => null))?.mtimeMs ?? null;
  const built = await mtime(app.out);
  if (built === null) return true;
  const inputs = await readFile(resolve(REPO, `${app.out}.inputs.json`), 'utf8')
    .then((t) => JSON.parse(t))
    .catch(() => null);
  if (!Array.isArray(inputs)) return true;
  for (const input of [...inputs, relative(REPO, fileURLToPath(import.meta.url))]) {
    const changed = await mtime(input);
    if (changed === null || changed > built) return true;
  }
  return false;
}

const ifStale = process.argv.includes('--if-stale');
const only = process.argv.slice(2).filter((a) => !a.startsWith('--'));
for (const app of APPS) {
  if (only.length > 0 && !only.includes(app.name)) continue;
  if (ifStale && !(await isStale(app))) continue;
  await buildApp(app);
}
