import { defineConfig } from 'vitest/config';

// The worker-process tests start real processes (and, with DATABASE_URL, a database of their
// own): generous timeouts, one file at a time.
if (!process.env['DATABASE_URL']) {
  console.log('[worker] DATABASE_URL is not set: only the start-up error tests run (the drain test needs PostgreSQL).');
}

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
