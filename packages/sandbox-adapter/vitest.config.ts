import { defineConfig } from 'vitest/config';

// Real bubblewrap, real child processes: one file at a time keeps the 2-core CI honest about
// the wall-clock limits the tests assert.
export default defineConfig({
  test: {
    testTimeout: 20_000,
    fileParallelism: false,
  },
});
