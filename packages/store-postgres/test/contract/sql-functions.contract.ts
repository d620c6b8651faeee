import { describe, expect, it } from 'vitest';
import { functionFiles, functionsIn } from '../../src/sql-functions';
import type { HarnessFactory } from './harness';

/**
 * sql/functions is the source of every veetbot_* function (ADR 0027); the migrations are
 * generated from it. After migrating, the database and the files must agree exactly (up to
 * the one documented normalisation, normaliseDefinition): a function edited in a migration by
 * hand, or a file edited without generating its migration, fails here on both drivers.
 */
export function sqlFunctionsContract(get: HarnessFactory): void {
  describe('sql/functions: one file per function, equal to the database', () => {
    it('every veetbot_* function in the database has a file, and every file a function', async () => {
      const inDatabase = await functionsIn(get().database);
      const files = functionFiles();
      expect(files.size).toBeGreaterThan(0);
      expect([...inDatabase.keys()].sort()).toEqual([...files.keys()].sort());
    });

    it("pg_get_functiondef equals the function's file", async () => {
      const inDatabase = await functionsIn(get().database);
      const drifted: string[] = [];
      for (const file of functionFiles().values()) {
        const stored = inDatabase.get(file.name);
        if (stored?.definition !== file.definition) drifted.push(file.name);
        // The message names the function; the diff shows how it drifted.
        expect(stored?.definition, `${file.name}: run sql:migration <slug> (ADR 0027)`).toBe(file.definition);
      }
      expect(drifted).toEqual([]);
    });
  });
}
