import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// The PostgreSQL run of the contract suite exists only when there is a server to run it on:
// a skipped test looks green, so without DATABASE_URL the file is not part of the run at all,
// and the summary at the end of `pnpm test` says so. postgres-only.json is the one list both
// read (ADR 0026).
const include = ['test/**/*.test.ts'];
const postgresOnly = (JSON.parse(readFileSync(new URL('./postgres-only.json', import.meta.url), 'utf8')) as { files: { pattern: string }[] }).files.map((f) => f.pattern);
const exclude = process.env['DATABASE_URL'] ? [] : postgresOnly;
if (exclude.length > 0) {
  console.log(`[store-postgres] DATABASE_URL is not set: left out (PGlite only; see the summary at the end): ${exclude.join(', ')}`);
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
