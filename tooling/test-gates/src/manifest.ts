import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

/**
 * A package's `postgres-only.json`: the test files its vitest.config.ts leaves out when
 * DATABASE_URL is not set (ADR 0026). The config excludes exactly these patterns, and the
 * summary at the end of `pnpm test` reads the same files: one list, no copy to drift.
 */
export const MANIFEST_FILE = 'postgres-only.json';

export const PostgresOnlyEntrySchema = z
  .object({
    /** A vitest exclude pattern, relative to the package: a file or a glob under test/. */
    pattern: z.string().regex(/^test\/[\w.*/-]+\.test\.ts$/),
    /** What the file asserts, in a few words. */
    what: z.string().min(1),
    /** Why it cannot run on the embedded PGlite. */
    why: z.string().min(1),
    /** The specification's hard gates (§ Hard gates) it asserts, wholly or in part. */
    hard_gates: z.array(z.number().int().min(1).max(16)).default([]),
    /** What of those gates still runs without DATABASE_URL, and where; absent: nothing does. */
    on_pglite: z.string().min(1).optional(),
  })
  .strict();

export const PostgresOnlyManifestSchema = z
  .object({
    $comment: z.string().optional(),
    files: z.array(PostgresOnlyEntrySchema).min(1),
  })
  .strict();

export type PostgresOnlyEntry = z.infer<typeof PostgresOnlyEntrySchema>;

export interface PackageManifest {
  /** The package folder, relative to the repository root (`apps/integration-tests`). */
  readonly dir: string;
  readonly files: readonly PostgresOnlyEntry[];
}

/**
 * The files a pattern names, relative to the package (vitest's glob, for the only shape the
 * schema admits: a literal folder and a file name where `*` is any run of characters).
 */
export function filesMatching(root: string, dir: string, pattern: string): string[] {
  const folder = path.posix.dirname(pattern);
  const name = path.posix.basename(pattern);
  const absolute = path.join(root, dir, folder);
  if (!existsSync(absolute)) return [];
  const matcher = new RegExp(
    `^${name
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^/]*')}$`,
  );
  return readdirSync(absolute)
    .filter((file) => matcher.test(file))
    .sort()
    .map((file) => `${folder}/${file}`);
}

/** The workspace's package folders: pnpm-workspace.yaml's `dir/*` patterns, expanded. */
export function workspaceDirs(root: string): string[] {
  const yaml = readFileSync(path.join(root, 'pnpm-workspace.yaml'), 'utf8');
  const block = /^packages:\n((?:[ \t]+-[^\n]*\n)+)/m.exec(yaml)?.[1] ?? '';
  const patterns = [...block.matchAll(/-\s*['"]?([^'"\n]+?)['"]?\s*$/gm)].map((m) => m[1]!);
  return patterns.flatMap((pattern) => {
    if (!pattern.endsWith('/*')) return [pattern];
    const parent = pattern.slice(0, -2);
    if (!existsSync(path.join(root, parent))) return [];
    return readdirSync(path.join(root, parent), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => `${parent}/${d.name}`);
  });
}

/** Every package's postgres-only.json, validated; a malformed one is an error, never ignored. */
export function loadManifests(root: string): PackageManifest[] {
  return workspaceDirs(root)
    .filter((dir) => existsSync(path.join(root, dir, MANIFEST_FILE)))
    .sort()
    .map((dir) => {
      const file = path.join(dir, MANIFEST_FILE);
      const parsed = PostgresOnlyManifestSchema.safeParse(JSON.parse(readFileSync(path.join(root, file), 'utf8')));
      if (!parsed.success) throw new Error(`${file} is not a valid list of PostgreSQL-only tests: ${parsed.error.message}`);
      return { dir, files: parsed.data.files };
    });
}
