import { defineConfig } from 'vitest/config';
// test-gates' entry by path, extension included: vite leaves a bare import to Node when it loads
// a config, and Node 20 cannot load TypeScript. The gate checks it as it would the bare name.
import { postgresOnlyExclusions } from '../../tooling/test-gates/src/index.ts';

// Without DATABASE_URL the files of postgres-only.json are not part of the run (a skipped test
// looks green), and the summary at the end of `pnpm test` names them (ADR 0026).
const excluded = postgresOnlyExclusions(import.meta.url, { label: 'api' });

// PGlite opens and migrates in seconds on a quiet machine and much longer on a loaded one.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...excluded],
    hookTimeout: 120_000,
    testTimeout: 60_000,
  },
});
