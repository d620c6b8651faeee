import { type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

/**
 * `column IN ('a', 'b')` for a closed vocabulary. The columns stay TEXT exactly as the
 * specification types them; the CHECK only refuses a value outside the vocabulary, so a typo
 * in a writer fails at the database rather than becoming a status nobody handles.
 */
export function oneOf(column: AnyPgColumn, values: readonly string[]): SQL {
  for (const value of values) {
    if (!/^[a-z0-9_]+$/.test(value)) throw new RangeError(`not a vocabulary value: ${value}`);
  }
  return sql`${column} IN (${sql.raw(values.map((value) => `'${value}'`).join(', '))})`;
}
