import { defineConfig } from 'vitest/config';

// Real chromium inside real bubblewrap: one file at a time on a 2-core machine.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
