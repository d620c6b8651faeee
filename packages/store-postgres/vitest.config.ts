import { defineConfig } from 'vitest/config';
// test-gates' entry by path, extension included: vite leaves a bare import to Node when it loads
// a config, and Node 20 cannot load TypeScript. The gate checks it as it would the bare name.
import { postgresOnlyExclusions } from '../../tooling/test-gates/src/index.ts';

// The PostgreSQL run of the contract suite exists only when there is a server to run it on:
// a skipped test looks green, so without DATABASE_URL the file is not part of the run at all,
// and the summary at the end of `pnpm test` says so. postgres-only.json is the one list both
// read (ADR 0026).
const include = ['test/**/*.test.ts'];
const exclude = postgresOnlyExclusions(import.meta.url, {
  label: 'store-postgres',
  leftOut: 'PGlite only; see the summary at the end',
  whenSet: 'DATABASE_URL is set: the contract suite runs on PGlite and on PostgreSQL.',
});

export default defineConfig({
  test: {
    include,
    exclude: ['**/node_modules/**', ...exclude],
    hookTimeout: 120_000,
    testTimeout: 30_000,
  },
});
