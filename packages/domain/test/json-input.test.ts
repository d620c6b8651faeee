import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CanonicalizationError,
  canonicalJson,
  checkJsonText,
  checkJsonValue,
  describeJsonPath,
  JSON_MAX_DEPTH,
  stringProblem,
} from '../src';

function nested(levels: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

describe('checkJsonValue', () => {
  it('accepts ordinary JSON, including a surrogate pair and U+FFFD', () => {
    expect(checkJsonValue({ a: [1, 'x', null, true, { b: 'caf\u00e9 \uD83D\uDE00 \uFFFD' }] })).toBeNull();
    expect(checkJsonValue('plain')).toBeNull();
  });

  it.each([
    ['a NUL in a value', { a: { b: 'x\u0000y' } }, 'json.nul_character', ['a', 'b'], false],
    ['a NUL in a key', { a: { 'x\u0000': 1 } }, 'json.nul_character', ['a'], true],
    ['a lone high surrogate', { a: ['ok', '\uD800'] }, 'json.lone_surrogate', ['a', 1], false],
    ['a lone low surrogate', { a: 'x\uDC00' }, 'json.lone_surrogate', ['a'], false],
    ['reversed halves of a pair', { a: '\uDE00\uD83D' }, 'json.lone_surrogate', ['a'], false],
    ['a lone surrogate in a key', { '\uD800': 1 }, 'json.lone_surrogate', [], true],
    ['a __proto__ key from JSON.parse', JSON.parse('{"a":{"__proto__":{"polluted":1}}}'), 'json.reserved_key', ['a'], true],
    ['undefined', { a: undefined }, 'json.not_json', ['a'], false],
    ['a function', { a: () => 1 }, 'json.not_json', ['a'], false],
    ['a bigint', { a: [1n] }, 'json.not_json', ['a', 0], false],
    ['a Date', { a: new Date(0) }, 'json.not_json', ['a'], false],
    ['a Map', new Map(), 'json.not_json', [], false],
  ])('refuses %s, naming where', (_name, value, code, path, inKey) => {
    expect(checkJsonValue(value)).toMatchObject({ code, path, inKey });
  });

  it('with canonicalNumbers, refuses what would not read back as sent: NaN, ±Infinity, -0', () => {
    expect(checkJsonValue({ a: -0, b: Number.NaN })).toBeNull();
    expect(checkJsonValue({ a: [1, -0] }, { canonicalNumbers: true })).toMatchObject({ code: 'json.negative_zero', path: ['a', 1] });
    expect(checkJsonValue(JSON.parse('{"a":1e400}'), { canonicalNumbers: true })).toMatchObject({
      code: 'json.non_finite_number',
      path: ['a'],
    });
    expect(checkJsonValue({ a: Number.NaN }, { canonicalNumbers: true })?.code).toBe('json.non_finite_number');
    expect(checkJsonValue({ a: 0, b: 1e308, c: -1.5 }, { canonicalNumbers: true })).toBeNull();
  });

  it('with undefinedIsAbsent, an unset field is not a refusal', () => {
    expect(checkJsonValue({ a: undefined, b: [1] }, { undefinedIsAbsent: true })).toBeNull();
  });

  it('refuses nesting 10,000 and 100,000 deep without recursing', () => {
    for (const levels of [10_000, 100_000]) {
      const refused = checkJsonValue(nested(levels));
      expect(refused?.code).toBe('json.too_deep');
      expect(refused?.path).toHaveLength(JSON_MAX_DEPTH + 1);
    }
    let arrays: unknown = [];
    for (let i = 0; i < 100_000; i++) arrays = [arrays];
    expect(checkJsonValue(arrays)?.code).toBe('json.too_deep');
  });

  it('draws the depth line exactly where the canonical form does', () => {
    for (let levels = JSON_MAX_DEPTH - 2; levels <= JSON_MAX_DEPTH + 2; levels++) {
      for (const leaf of [1, {}, []]) {
        const value = nested(levels, leaf);
        let canonicalTooDeep = false;
        try {
          canonicalJson(value);
        } catch (error) {
          canonicalTooDeep = error instanceof CanonicalizationError && error.code === 'canonical.too_deep';
        }
        expect(checkJsonValue(value)?.code === 'json.too_deep', `${levels} ${JSON.stringify(leaf)}`).toBe(canonicalTooDeep);
      }
    }
  });

  it('stops a shared-reference graph built in code instead of walking it exponentially', () => {
    let value: unknown = 'leaf';
    for (let i = 0; i < 60; i++) value = [value, value]; // 2^60 paths, 61 objects
    expect(checkJsonValue(value)?.code).toBe('json.too_many_values');
    expect(checkJsonValue([1, 2, 3], { maxValues: 3 })?.code).toBe('json.too_many_values');
    expect(checkJsonValue([1, 2], { maxValues: 3 })).toBeNull();
  });

  it('is null exactly when no string or key holds NUL or a lone surrogate (property)', () => {
    const unit = fc.oneof(
      fc.constantFrom('\u0000', '\uD800', '\uDC00', '\uD83D\uDE00', 'a', '\u00e9', '"', '\\'),
      fc.string({ maxLength: 3 }),
    );
    const text = fc.array(unit, { maxLength: 6 }).map((parts) => parts.join(''));
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 4 }),
      object: fc.dictionary(text, tie('value'), { maxKeys: 4 }),
    })).value;
    fc.assert(
      fc.property(json, (value) => {
        const strings: string[] = [];
        const collect = (v: unknown): void => {
          if (typeof v === 'string') strings.push(v);
          else if (Array.isArray(v)) v.forEach(collect);
          else if (v !== null && typeof v === 'object')
            for (const [k, child] of Object.entries(v)) {
              strings.push(k);
              collect(child);
            }
        };
        collect(value);
        const bad = strings.some(
          (s) =>
            s.includes('\u0000') || /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s) || s === '__proto__',
        );
        expect(checkJsonValue(value) !== null).toBe(bad);
      }),
      { numRuns: 500 },
    );
  });
});

describe('checkJsonText', () => {
  it('finds a key that appears twice, spelled the same or through escapes', () => {
    expect(checkJsonText('{"a":1,"a":2}')).toMatchObject({ code: 'json.duplicate_key', path: ['a'] });
    expect(checkJsonText('{"calls":[{"x":1},{"arguments":{"k":1,"\\u006b":2}}]}')).toMatchObject({
      code: 'json.duplicate_key',
      path: ['calls', 1, 'arguments', 'k'],
    });
    // Same key in different objects, and look-alikes inside strings, are not duplicates.
    expect(checkJsonText('{"a":{"a":1},"b":[{"a":1},{"a":2}],"c":"\\"a\\":1,{\\"a\\":2}","d":"}],{"}')).toBeNull();
  });

  it('with rawSurrogates, finds the bytes that were not UTF-8, even next to an escaped high surrogate', () => {
    // A decoder keeps a bad byte 0x80 as U+DC80; "\ud800" before it would pair with it after JSON.parse.
    expect(checkJsonText('{"a":["ok","x\\ud800\uDC80"]}', { rawSurrogates: true })).toMatchObject({
      code: 'json.lone_surrogate',
      path: ['a', 1],
      inKey: false,
    });
    expect(checkJsonText('{"a":{"k\uDCFF":1}}', { rawSurrogates: true })).toMatchObject({
      code: 'json.lone_surrogate',
      path: ['a'],
      inKey: true,
    });
    expect(checkJsonText('{"a":"\uD83D\uDE00"}', { rawSurrogates: true })).toBeNull();
  });

  it('ends on text that is not JSON (outside its precondition) instead of looping', () => {
    for (const text of ['{"a":"unterminated', '"\\', '[[[', '{"a":1,"a']) expect(() => checkJsonText(text)).not.toThrow();
  });

  it('finds nothing in any JSON.stringify output (property)', () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        (value) => checkJsonText(JSON.stringify(value)) === null && checkJsonText(JSON.stringify(value, null, 2)) === null,
      ),
    );
  });

  it('reports a duplicate exactly when an object repeats a key (property)', () => {
    const key = fc.constantFrom('a', 'b', 'ab', '\u00e9', 'x"y', 'x\\y', '{', ',');
    fc.assert(
      fc.property(fc.array(fc.tuple(key, fc.jsonValue({ maxDepth: 2 })), { maxLength: 6 }), fc.boolean(), (entries, escapeFirst) => {
        const spell = (k: string, i: number) =>
          escapeFirst && i === 0
            ? `"${[...k].map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`
            : JSON.stringify(k);
        const text = `{"outer":[0,{${entries.map(([k, v], i) => `${spell(k, i)}:${JSON.stringify(v)}`).join(',')}}]}`;
        const repeated = new Set(entries.map(([k]) => k)).size !== entries.length;
        const found = checkJsonText(text);
        expect(found?.code === 'json.duplicate_key').toBe(repeated);
        if (found) expect(found.path.slice(0, 2)).toEqual(['outer', 1]);
      }),
      { numRuns: 300 },
    );
  });
});

describe('stringProblem and describeJsonPath', () => {
  it('names the problem of one string', () => {
    expect(stringProblem('ok \uD83D\uDE00')).toBeNull();
    expect(stringProblem('\u0000')).toBe('nul_character');
    expect(stringProblem('\uDBFF')).toBe('lone_surrogate');
  });

  it('shows plain keys as they are, quotes and escapes the others, and cuts deep paths', () => {
    expect(describeJsonPath(['calls', 0, 'arguments', 'x'])).toBe('calls.0.arguments.x');
    expect(describeJsonPath(['a.b', 'line\nbreak', '\u202Eevil'])).toBe('"a.b"."line\\nbreak"."\\u202eevil"');
    expect(describeJsonPath(['k'.repeat(100)])).toBe(`"${'k'.repeat(64)}"…`);
    expect(describeJsonPath(Array.from({ length: 200 }, () => 'a'))).toBe(`${Array.from({ length: 12 }, () => 'a').join('.')}.…`);
  });
});
