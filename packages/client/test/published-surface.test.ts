import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The installable package (docs/adr/0071): scripts/build-package.mjs builds dist/ as npm will
// see it. Its .d.ts is the published surface, pinned by public-surface.api.md: a change to any
// exported type, or to a @veetbot/domain type it inlines, fails here until the file is
// regenerated (`pnpm --filter @veetbot/client surface:update`) and committed with the change.
// Installing the tarball outside the workspace and running a typed script against a live api is
// apps/integration-tests/test/client-tarball.test.ts (a package's tests may not start an app).

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), '..');
let out: string;

beforeAll(async () => {
  // Inside the package (.tmp/ is git-ignored): the bundle's bare `zod` resolves from here.
  await mkdir(join(PACKAGE, '.tmp'), { recursive: true });
  out = await mkdtemp(join(PACKAGE, '.tmp', 'build-'));
  await promisify(execFile)(process.execPath, [join(PACKAGE, 'scripts/build-package.mjs'), '--out', out], { cwd: PACKAGE });
}, 120_000);

afterAll(async () => {
  if (out !== undefined) await rm(out, { recursive: true, force: true });
});

describe('the published @veetbot/client', () => {
  it('declares exactly the committed surface', async () => {
    const report = await readFile(join(out, 'surface.api.md'), 'utf8');
    const pinned = await readFile(join(PACKAGE, 'public-surface.api.md'), 'utf8');
    // toBe on the whole text: the failure shows the diff of the surface.
    expect(report, 'the public surface changed: run `pnpm --filter @veetbot/client surface:update` and commit it').toBe(pinned);
    const built = await readFile(join(out, 'index.d.ts'), 'utf8');
    expect(report).toContain(`\`\`\`ts\n${built.trimEnd()}\n\`\`\`\n`);
    expect(built).not.toMatch(/@veetbot\//);
    expect(built).toMatch(/^import \{ z \} from 'zod';$/m);
  });

  it('has a manifest npm can install: no workspace ranges, real dependencies, exports and types set', async () => {
    const manifest = JSON.parse(await readFile(join(out, 'package.json'), 'utf8'));
    const workspace = JSON.parse(await readFile(join(PACKAGE, 'package.json'), 'utf8'));
    const zod = JSON.parse(await readFile(join(PACKAGE, 'node_modules/zod/package.json'), 'utf8'));
    expect(JSON.stringify(manifest)).not.toMatch(/workspace:|catalog:|@veetbot\/(?!client)/);
    expect(manifest).toEqual({
      name: '@veetbot/client',
      version: workspace.version,
      description: workspace.description,
      license: 'MIT',
      type: 'module',
      engines: { node: '>=20.12' },
      sideEffects: false,
      exports: { '.': { types: './index.d.ts', import: './index.js', default: './index.js' }, './package.json': './package.json' },
      main: './index.js',
      types: './index.d.ts',
      files: ['index.js', 'index.d.ts', 'README.md', 'LICENSE'],
      dependencies: { zod: zod.version },
    });
    expect(manifest.private).toBeUndefined();
    expect(manifest.version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('bundles the domain in and imports nothing but zod', async () => {
    const code = await readFile(join(out, 'index.js'), 'utf8');
    const imported = new Set([...code.matchAll(/\bfrom\s*["']([^"']+)["']/g)].map((m) => m[1]));
    expect([...imported]).toEqual(['zod']);
    expect(code).not.toMatch(/\bimport\s*\(|\brequire\s*\(/);
    // The domain's values the wire needs are inside the bundle, not imported.
    expect(code).toContain('"external_untrusted"');
    // Nothing of the machine that built it: no absolute path, no source map pointing home.
    const declarations = await readFile(join(out, 'index.d.ts'), 'utf8');
    for (const text of [code, declarations]) {
      expect(text).not.toContain(dirname(PACKAGE));
      expect(text).not.toMatch(/sourceMappingURL|file:\/\//);
    }
  });

  it('loads under plain Node and exports at run time what the source entry does', async () => {
    const sourceEntry = await import('../src/index');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(join(out, 'index.js'))}); console.log(JSON.stringify(Object.keys(m).sort()));`,
      ],
      { cwd: PACKAGE },
    );
    expect(JSON.parse(stdout)).toEqual(Object.keys(sourceEntry).sort());
    // A child Node and the source entry's transform: seconds on a loaded machine, not the 5 s default.
  }, 60_000);
});
