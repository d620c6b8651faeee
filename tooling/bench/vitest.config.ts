import { defineConfig } from 'vitest/config';
// test-gates' entry by path, extension included: vite leaves a bare import to Node when it loads
// a config, and Node 20 cannot load TypeScript (as apps/integration-tests does).
import { postgresOnlyExclusions } from '../test-gates/src/index.ts';

// The benchmarks themselves run under `pnpm bench`; these tests check the measuring parts
// (the harness, the commit counter, the floor, the results page) on PGlite, in seconds. The
// bench's own cluster (docs/adr/0072) needs PostgreSQL's server binaries: postgres-only.json.
const excluded = postgresOnlyExclusions(import.meta.url, { label: 'bench' });

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...excluded],
    hookTimeout: 120_000,
    testTimeout: 60_000,
  },
});
