import { defineConfig } from 'vitest/config';

// The PostgreSQL run of the contract suite exists only when there is a server to run it on:
// a skipped test looks green, so without DATABASE_URL the file is not part of the run at all.
const include = ['test/**/*.test.ts'];
const exclude = process.env['DATABASE_URL'] ? [] : ['test/postgres.test.ts'];
if (exclude.length > 0) {
  console.log('[store-postgres] DATABASE_URL is not set: the PostgreSQL contract run (test/postgres.test.ts) is not included; PGlite only.');
} else {
  console.log('[store-postgres] DATABASE_URL is set: the contract suite runs on PGlite and on PostgreSQL.');
}

export default defineConfig({
  test: {
    include,
    exclude: ['**/node_modules/**', ...exclude],
    hookTimeout: 120_000,
    testTimeout: 30_000,
  },
});
