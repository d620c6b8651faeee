import { defineConfig } from 'vitest/config';

// The benchmarks themselves run under `pnpm bench`; these tests check the measuring parts
// (the harness, the commit counter, the floor, the results page) on PGlite, in seconds.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    hookTimeout: 120_000,
    testTimeout: 60_000,
  },
});
