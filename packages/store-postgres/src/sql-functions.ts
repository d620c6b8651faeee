import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import type { Database } from './database';

/**
 * packages/store-postgres/sql/functions: one file per SQL function of the schema, holding its
 * current definition (ADR 0027). The files are the source; a migration that changes a function
 * is generated from them (`pnpm --filter @veetbot/store-postgres sql:migration <slug>`).
 */
export const FUNCTIONS_FOLDER = fileURLToPath(new URL('../sql/functions', import.meta.url));

/** The functions this package owns: every function in the public schema named veetbot_*. */
const OWNED = 'veetbot\\_%';

/** A function as the database holds it. */
export interface DatabaseFunction {
  readonly name: string;
  /** pg_get_function_identity_arguments: what DROP FUNCTION needs. */
  readonly identity: string;
  /** pg_get_functiondef, normalised (see `normaliseDefinition`). */
  readonly definition: string;
}

/** A function as its file holds it. */
export interface FunctionFile {
  readonly name: string;
  readonly path: string;
  /** The whole file: its header comment, the definition and the closing semicolon. */
  readonly text: string;
  /** The definition alone, normalised (see `normaliseDefinition`). */
  readonly definition: string;
}

/**
 * The one normalisation both sides get, so the comparison is exact otherwise: the file's
 * leading `--` comment lines (why the function exists; PostgreSQL keeps no comment outside
 * the body) and blank lines are dropped, then trailing whitespace and the file's closing `;`.
 * Everything else — the body byte for byte — must equal pg_get_functiondef.
 */
export function normaliseDefinition(text: string): string {
  const lines = text.split('\n');
  let first = 0;
  while (first < lines.length && (/^\s*$/.test(lines[first] ?? '') || /^\s*--/.test(lines[first] ?? ''))) first += 1;
  return lines.slice(first).join('\n').trimEnd().replace(/;$/, '').trimEnd();
}

/** Every veetbot_* function of the public schema, by name. */
export async function functionsIn(database: Database): Promise<Map<string, DatabaseFunction>> {
  const rows = await database.statement(sql`
    select p.proname as name, pg_get_function_identity_arguments(p.oid) as identity, pg_get_functiondef(p.oid) as definition
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'public' and p.proname like ${OWNED}
    order by p.proname, identity`);
  const out = new Map<string, DatabaseFunction>();
  for (const row of rows) {
    const name = String(row.name);
    // One file per name: an overload would have no file of its own.
    if (out.has(name)) throw new Error(`${name} is overloaded; sql/functions holds one definition per name.`);
    out.set(name, { name, identity: String(row.identity), definition: normaliseDefinition(String(row.definition)) });
  }
  return out;
}

/** Every file of sql/functions, by function name (the file name without `.sql`). */
export function functionFiles(folder: string = FUNCTIONS_FOLDER): Map<string, FunctionFile> {
  const out = new Map<string, FunctionFile>();
  for (const entry of readdirSync(folder)
    .filter((file) => file.endsWith('.sql'))
    .sort()) {
    const path = join(folder, entry);
    const text = readFileSync(path, 'utf8');
    out.set(entry.slice(0, -'.sql'.length), { name: entry.slice(0, -'.sql'.length), path, text, definition: normaliseDefinition(text) });
  }
  return out;
}

/** The first two lines of a definition: `CREATE OR REPLACE FUNCTION name(arguments)` and `RETURNS type`. */
export function signatureOf(definition: string): string {
  return definition.split('\n').slice(0, 2).join('\n');
}

/** The header line the generator keeps current; not part of a migration's copy of the file. */
const LAST_CHANGED_LINE = /^-- Last changed by migrations\/.*\n/m;

/** The statements that take the database's functions to the files, in file-name order. */
export function statementsFor(current: ReadonlyMap<string, DatabaseFunction>, files: ReadonlyMap<string, FunctionFile>): string[] {
  const out: string[] = [];
  for (const file of files.values()) {
    const existing = current.get(file.name);
    if (existing?.definition === file.definition) continue;
    // CREATE OR REPLACE cannot change the arguments (it would add an overload) or the return type.
    if (existing && signatureOf(existing.definition) !== signatureOf(file.definition)) {
      out.push(`DROP FUNCTION public.${existing.name}(${existing.identity});`);
    }
    out.push(file.text.replace(LAST_CHANGED_LINE, '').trimEnd());
  }
  for (const existing of current.values()) {
    if (!files.has(existing.name)) out.push(`DROP FUNCTION public.${existing.name}(${existing.identity});`);
  }
  return out;
}
