import { readFileSync } from 'node:fs';
import { MANIFEST_FILE, PostgresOnlyManifestSchema } from './manifest.ts';

export interface PostgresOnlyExclusionsOptions {
  /** The package's name in the log line (`[cli] DATABASE_URL is not set: ...`). */
  readonly label: string;
  /** What the left-out line says after the file list's reason; the default fits most packages. */
  readonly leftOut?: string;
  /** A line to print when DATABASE_URL is set (store-postgres says the contract runs twice). */
  readonly whenSet?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * What a package's vitest.config.ts excludes: without DATABASE_URL, the patterns of its
 * postgres-only.json, so those files are not part of the run at all (a skipped test looks
 * green); the summary at the end of `pnpm test` reads the same file and names them (ADR 0026).
 * With DATABASE_URL, nothing. `configUrl` is the config's `import.meta.url`: the manifest sits
 * beside it.
 */
export function postgresOnlyExclusions(configUrl: string, options: PostgresOnlyExclusionsOptions): string[] {
  const env = options.env ?? process.env;
  if (env.DATABASE_URL) {
    if (options.whenSet !== undefined) console.log(`[${options.label}] ${options.whenSet}`);
    return [];
  }
  const manifest = PostgresOnlyManifestSchema.parse(JSON.parse(readFileSync(new URL(`./${MANIFEST_FILE}`, configUrl), 'utf8')));
  const excluded = manifest.files.map((file) => file.pattern);
  const leftOut = options.leftOut ?? 'they need PostgreSQL; see the summary at the end';
  console.log(`[${options.label}] DATABASE_URL is not set: left out (${leftOut}): ${excluded.join(', ')}`);
  return excluded;
}
