import { describe, expect, it } from 'vitest';
import { type DatabaseFunction, type FunctionFile, normaliseDefinition, statementsFor } from '../src/sql-functions';

// The generator's choice of statements (scripts/sql-migration.ts, ADR 0027), on made-up
// definitions: pure, so no database.
const def = (name: string, args: string, returns: string, body: string): string =>
  `CREATE OR REPLACE FUNCTION public.${name}(${args})\n RETURNS ${returns}\n LANGUAGE plpgsql\nAS $function$\n${body}\n$function$`;

function file(name: string, definition: string): FunctionFile {
  const text = `-- Why ${name} exists.\n-- Last changed by migrations/0001_x.sql.\n${definition};\n`;
  return { name, path: `${name}.sql`, text, definition: normaliseDefinition(text) };
}
function stored(name: string, identity: string, definition: string): DatabaseFunction {
  return { name, identity, definition: normaliseDefinition(`${definition}\n`) };
}

describe('sql:migration statements', () => {
  const same = def('veetbot_a', 'p text', 'void', 'BEGIN END');

  it('the normalisation drops only the header comment, trailing whitespace and the closing semicolon', () => {
    expect(normaliseDefinition(`-- a\n\n-- b\n${same};\n\n`)).toBe(same);
    expect(normaliseDefinition(`${same}\n`)).toBe(same);
    // A comment inside the body is part of the definition.
    const withComment = def('veetbot_a', 'p text', 'void', '-- inside\nBEGIN END');
    expect(normaliseDefinition(withComment)).toBe(withComment);
  });

  it('writes nothing when every file equals the database', () => {
    expect(
      statementsFor(new Map([['veetbot_a', stored('veetbot_a', 'p text', same)]]), new Map([['veetbot_a', file('veetbot_a', same)]])),
    ).toEqual([]);
  });

  it('a changed body: CREATE OR REPLACE from the file, header comment kept, its bookkeeping line not', () => {
    const changed = def('veetbot_a', 'p text', 'void', 'BEGIN PERFORM 1; END');
    const out = statementsFor(
      new Map([['veetbot_a', stored('veetbot_a', 'p text', same)]]),
      new Map([['veetbot_a', file('veetbot_a', changed)]]),
    );
    expect(out).toEqual([`-- Why veetbot_a exists.\n${changed};`]);
  });

  it('changed arguments or return type: DROP the old signature, then CREATE', () => {
    const wider = def('veetbot_a', 'p text, q jsonb', 'void', 'BEGIN END');
    const out = statementsFor(
      new Map([['veetbot_a', stored('veetbot_a', 'p text', same)]]),
      new Map([['veetbot_a', file('veetbot_a', wider)]]),
    );
    expect(out).toEqual(['DROP FUNCTION public.veetbot_a(p text);', `-- Why veetbot_a exists.\n${wider};`]);
    const returns = def('veetbot_a', 'p text', 'jsonb', 'BEGIN END');
    expect(
      statementsFor(new Map([['veetbot_a', stored('veetbot_a', 'p text', same)]]), new Map([['veetbot_a', file('veetbot_a', returns)]]))[0],
    ).toBe('DROP FUNCTION public.veetbot_a(p text);');
  });

  it('a new file: CREATE; a removed file: DROP', () => {
    const created = def('veetbot_b', '', 'void', 'BEGIN END');
    expect(statementsFor(new Map(), new Map([['veetbot_b', file('veetbot_b', created)]]))).toEqual([
      `-- Why veetbot_b exists.\n${created};`,
    ]);
    expect(statementsFor(new Map([['veetbot_a', stored('veetbot_a', 'p text', same)]]), new Map())).toEqual([
      'DROP FUNCTION public.veetbot_a(p text);',
    ]);
  });
});
