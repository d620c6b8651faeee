import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Issue 30 items 1a and 6 (docs/adr/0057): what a newcomer's `pnpm install` and `pnpm start`
 * print and do before veetbot itself runs.
 */
const REPO = fileURLToPath(new URL('../../..', import.meta.url));
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe('the start scripts', () => {
  const scripts = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

  it('ensure bubblewrap first, as `pnpm test` does, and exec the process last (no shell left to die of a signal)', () => {
    for (const [name, app] of [
      ['start', 'apps/api/dist/main.mjs'],
      ['start:api', 'apps/api/dist/main.mjs --api-only'],
      ['start:worker', 'apps/worker/dist/main.mjs'],
    ] as const) {
      expect(scripts[name], name).toMatch(
        /^sh scripts\/ensure-bubblewrap\.sh && node scripts\/build-apps\.mjs --if-stale \w+ && exec node /,
      );
      expect(scripts[name]!.endsWith(`exec node ${app}`), name).toBe(true);
    }
    expect(scripts.test).toMatch(/^sh scripts\/ensure-bubblewrap\.sh && /);
  });

  /** scripts/ensure-bubblewrap.sh with only `bin` on the PATH: what it prints, and its exit code. */
  function ensureBubblewrap(bin: string): { code: number | null; stdout: string; stderr: string } {
    const run = spawnSync('/bin/sh', ['scripts/ensure-bubblewrap.sh'], { cwd: REPO, env: { PATH: bin }, encoding: 'utf8' });
    return { code: run.status, stdout: run.stdout, stderr: run.stderr };
  }

  it('ensure-bubblewrap.sh: silent when bwrap is there; when it is missing and cannot be installed, one line and exit 0 (the start goes on)', () => {
    const present = mkdtempSync(join(tmpdir(), 'veetbot-bin-'));
    folders.push(present);
    writeFileSync(join(present, 'bwrap'), '#!/bin/sh\nexit 0\n');
    chmodSync(join(present, 'bwrap'), 0o755);
    expect(ensureBubblewrap(present)).toEqual({ code: 0, stdout: '', stderr: '' });

    // No bwrap and no apt-get on the PATH, and a user who is not root (`id -u` answers 1000):
    // nothing it can install, and nothing it tries.
    const missing = mkdtempSync(join(tmpdir(), 'veetbot-bin-'));
    folders.push(missing);
    writeFileSync(join(missing, 'id'), '#!/bin/sh\necho 1000\n');
    chmodSync(join(missing, 'id'), 0o755);
    expect(ensureBubblewrap(missing)).toEqual({
      code: 0,
      stdout: '',
      stderr: 'setup: bubblewrap (bwrap) is missing and could not be installed here; run: sudo apt-get install -y bubblewrap\n',
    });
  });
});

describe('install scripts of dependencies (pnpm install prints nothing to wonder about)', () => {
  /** The names listed under `key:` in pnpm-workspace.yaml. */
  function listed(key: string): string[] {
    const lines = readFileSync(join(REPO, 'pnpm-workspace.yaml'), 'utf8').split('\n');
    const at = lines.indexOf(`${key}:`);
    if (at < 0) return [];
    const names: string[] = [];
    for (const line of lines.slice(at + 1)) {
      const item = /^ {2}- (\S+)$/.exec(line);
      if (item === null) break;
      // A scoped name is quoted in YAML (a plain scalar cannot start with @).
      names.push(item[1]!.replace(/^"(.*)"$/, '$1'));
    }
    return names;
  }

  /** Every installed package (node_modules/.pnpm) that has an install-time script pnpm would run or report. */
  function withInstallScripts(): Map<string, Record<string, string>> {
    const store = join(REPO, 'node_modules/.pnpm');
    const found = new Map<string, Record<string, string>>();
    for (const entry of readdirSync(store)) {
      const modules = join(store, entry, 'node_modules');
      if (!existsSync(modules)) continue;
      for (const top of readdirSync(modules)) {
        for (const name of top.startsWith('@') ? readdirSync(join(modules, top)).map((n) => `${top}/${n}`) : [top]) {
          const manifestPath = join(modules, name, 'package.json');
          if (!existsSync(manifestPath)) continue;
          const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { name?: string; scripts?: Record<string, string> };
          // Only the package this store entry is for (its dependencies are linked beside it).
          if (manifest.name === undefined || !entry.startsWith(`${manifest.name.replace('/', '+')}@`)) continue;
          const scripts = Object.fromEntries(
            Object.entries(manifest.scripts ?? {}).filter(([k]) => k === 'preinstall' || k === 'install' || k === 'postinstall'),
          );
          if (existsSync(join(modules, name, 'binding.gyp')) && scripts.install === undefined) scripts.install = 'node-gyp rebuild';
          if (Object.keys(scripts).length > 0) found.set(manifest.name, scripts);
        }
      }
    }
    return found;
  }

  it('every dependency with an install script is decided: allowed (onlyBuiltDependencies) or ignored (ignoredBuiltDependencies)', () => {
    const decided = new Set([...listed('onlyBuiltDependencies'), ...listed('ignoredBuiltDependencies')]);
    const found = withInstallScripts();
    expect(found.size).toBeGreaterThan(0);
    const undecided = [...found.keys()].filter((name) => !decided.has(name));
    expect(undecided, 'add each to onlyBuiltDependencies (needed) or ignoredBuiltDependencies (not), docs/adr/0057').toEqual([]);
    expect(listed('onlyBuiltDependencies')).toContain('esbuild');
    expect(listed('ignoredBuiltDependencies')).toEqual(['@scarf/scarf', 'protobufjs']);
  });

  it("protobufjs's postinstall is still the one ADR 0057 judged (a version-scheme warning, nothing built)", () => {
    const scripts = withInstallScripts().get('protobufjs');
    expect(scripts).toEqual({ postinstall: 'node scripts/postinstall' });
  });
});
