import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { postgresOnlyExclusions } from '../src/postgres-only-exclusions';

// ADR 0026 / docs/adr/0031: every vitest.config.ts that leaves PostgreSQL-only files out reads
// its postgres-only.json through this one function, so what the config excludes is exactly what
// the summary at the end of `pnpm test` names.
const ROOT = path.resolve(import.meta.dirname, '../../..');
const configOf = (dir: string): string => pathToFileURL(path.join(ROOT, dir, 'vitest.config.ts')).href;
const patternsOf = (dir: string): string[] =>
  (JSON.parse(readFileSync(path.join(ROOT, dir, 'postgres-only.json'), 'utf8')) as { files: { pattern: string }[] }).files.map(
    (f) => f.pattern,
  );

afterEach(() => vi.restoreAllMocks());

describe('postgresOnlyExclusions', () => {
  it('without DATABASE_URL: the manifest beside the config, every pattern, and one line naming them', () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const excluded = postgresOnlyExclusions(configOf('apps/worker'), { label: 'worker', env: {} });
    expect(excluded).toEqual(patternsOf('apps/worker'));
    expect(excluded.length).toBeGreaterThan(0);
    expect(log.mock.calls).toEqual([
      [`[worker] DATABASE_URL is not set: left out (they need PostgreSQL; see the summary at the end): ${excluded.join(', ')}`],
    ]);
  });

  it('with DATABASE_URL: nothing left out, and the optional line the package asks for', () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const env = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' };
    expect(postgresOnlyExclusions(configOf('apps/cli'), { label: 'cli', env })).toEqual([]);
    expect(log).not.toHaveBeenCalled();
    expect(postgresOnlyExclusions(configOf('packages/store-postgres'), { label: 'store-postgres', whenSet: 'both drivers', env })).toEqual(
      [],
    );
    expect(log.mock.calls).toEqual([['[store-postgres] both drivers']]);
  });

  it('a config with no manifest beside it fails loudly, never an empty list', () => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    expect(() => postgresOnlyExclusions(configOf('tooling/test-gates'), { label: 'test-gates', env: {} })).toThrow(/ENOENT/);
  });
});
