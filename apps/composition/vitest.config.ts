import { defineConfig } from 'vitest/config';

// PGlite opens and migrates in seconds on a quiet machine and much longer on a loaded one.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    hookTimeout: 120_000,
    testTimeout: 60_000,
  },
});
