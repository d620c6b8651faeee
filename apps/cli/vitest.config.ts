import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// Without DATABASE_URL the files of postgres-only.json are not part of the run (a skipped test
// looks green), and the summary at the end of `pnpm test` names them (ADR 0026).
const postgresOnly = (JSON.parse(readFileSync(new URL('./postgres-only.json', import.meta.url), 'utf8')) as { files: { pattern: string }[] }).files.map((f) => f.pattern);
const excluded = process.env['DATABASE_URL'] ? [] : postgresOnly;
if (excluded.length > 0) {
  console.log(`[cli] DATABASE_URL is not set: left out (they need PostgreSQL; see the summary at the end): ${excluded.join(', ')}`);
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...excluded],
  },
});
