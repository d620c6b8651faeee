import { defineConfig } from 'vitest/config';

// Integration tests start databases and processes: longer timeouts, and files one at a time so
// two cores are not oversubscribed by concurrent PostgreSQL databases and child processes.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
