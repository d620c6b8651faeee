import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// The crash, two-process concurrent-submission, SIGSTOP and e2e suites run their workers as real
// child processes, which share nothing with the test but a database server: PGlite (in this
// process's memory) cannot be reached from a second process. Without DATABASE_URL those files
// are not part of the run at all — a skipped test looks green — and the summary at the end of
// `pnpm test` names them and the line that runs them. postgres-only.json is the one list both
// read (ADR 0026).
const postgresOnly = (JSON.parse(readFileSync(new URL('./postgres-only.json', import.meta.url), 'utf8')) as { files: { pattern: string }[] }).files.map((f) => f.pattern);
const excluded = process.env['DATABASE_URL'] ? [] : postgresOnly;
if (excluded.length > 0) {
  console.log(`[integration-tests] DATABASE_URL is not set: left out (they need PostgreSQL; see the summary at the end): ${excluded.join(', ')}`);
}

// Integration tests start databases and processes: longer timeouts, and files one at a time so
// two cores are not oversubscribed by concurrent PostgreSQL databases and child processes.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...excluded],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
