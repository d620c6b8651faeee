import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sources(path);
    return /\.(c|m)?tsx?$/.test(name) || /\.(c|m)?js$/.test(name) ? [path] : [];
  });
}

/**
 * Every `.reveal(` in the src/ of every package and app, as `file:line`. The contract kits
 * (packages/port-contracts, docs/adr/0030) are test support that no src/ may import: they reveal
 * what a resolver returned in order to compare it, and are not part of the product.
 */
function revealSites(): string[] {
  const sites: string[] = [];
  for (const group of ['packages', 'apps']) {
    for (const name of readdirSync(join(ROOT, group))) {
      if (group === 'packages' && name === 'port-contracts') continue;
      const src = join(ROOT, group, name, 'src');
      if (!statSync(join(ROOT, group, name)).isDirectory()) continue;
      let files: string[];
      try {
        files = sources(src);
      } catch {
        continue;
      }
      for (const file of files) {
        readFileSync(file, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (/\.reveal\(/.test(line)) sites.push(`${relative(ROOT, file)}:${i + 1}`);
          });
      }
    }
  }
  return sites.sort();
}

describe('§ Authentication: .reveal() is called in exactly two places, both inside adapters.mcp', () => {
  it('building a header and building a child environment; nothing else in the product reveals a secret', () => {
    const sites = revealSites().map((site) => site.replace(/:\d+$/, ''));
    // apps/integration-tests/src is the test harness, not the product: demo.secret_echo plays a
    // tool that reveals its credential and leaks it everywhere, which is what the executor's
    // scrubber is tested against (executor-credentials.test.ts). It is named here, not skipped.
    const product = sites.filter((file) => file !== 'apps/integration-tests/src/demo-test-tools.ts');
    expect(product).toEqual([
      'packages/mcp-adapter/src/auth/credential-state.ts',
      'packages/mcp-adapter/src/transport/stdio-server-transport.ts',
    ]);
    expect(sites.length - product.length).toBe(1);
    // The header site is one method, and its one reveal: bearer, header, and a token request's
    // client authentication (client_secret_basic, client_secret_post, the private_key_jwt
    // assertion; docs/adr/0083) all build their credential through it.
    const state = readFileSync(join(ROOT, 'packages/mcp-adapter/src/auth/credential-state.ts'), 'utf8');
    expect(state).toMatch(
      /#fromSecret<T>\(secret: SecretValue, build: \(value: string\) => T\): T \{\n\s+return build\(secret\.reveal\(\)\);/,
    );
    expect(state.match(/\.reveal\(/g)).toHaveLength(1);
  });
});
