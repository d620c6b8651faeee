import { defineConfig } from 'vitest/config';
// test-gates' entry by path, extension included: vite leaves a bare import to Node when it loads
// a config, and Node 20 cannot load TypeScript. The gate checks it as it would the bare name.
import { postgresOnlyExclusions } from '../../tooling/test-gates/src/index.ts';

// The crash, two-process concurrent-submission, SIGSTOP and e2e suites run their workers as real
// child processes, which share nothing with the test but a database server: PGlite (in this
// process's memory) cannot be reached from a second process. Without DATABASE_URL those files
// are not part of the run at all — a skipped test looks green — and the summary at the end of
// `pnpm test` names them and the line that runs them. postgres-only.json is the one list both
// read (ADR 0026).
const excluded = postgresOnlyExclusions(import.meta.url, { label: 'integration-tests' });

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
