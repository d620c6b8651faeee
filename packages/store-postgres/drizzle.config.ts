import { defineConfig } from 'drizzle-kit';

// `pnpm --filter @veetbot/store-postgres db:generate` writes SQL into the repository's
// migrations/ folder (ARCHITECTURE.md "Layout"). Row-level security is hand-written in a
// custom migration (`db:generate:custom`), never generated.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/schema/index.ts',
  out: '../../migrations',
  strict: true,
});
