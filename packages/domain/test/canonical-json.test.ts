import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CANONICAL_MAX_DEPTH, CanonicalizationError, VeetbotError, argumentsHash, canonicalJson, compareCodePoints } from '../src/index';
import { canonicalJsonByWriter } from '../src/canonical-json';

// § Argument validation and the canonical form; Hard gate 9 ("Normalization is stable").

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Characters that compose or decompose under NFC/NFD, plus astral and high-BMP ones. */
const COMPOSABLE_UNITS = [
  'e',
  '\u0301', // combining acute
  'é',
  'E',
  'Å',
  'A',
  '\u030A', // combining ring above
  '\u212B', // ANGSTROM SIGN: NFC maps it to Å
  '한',
  '\u1112', // Hangul choseong hieuh
  '\u1161', // Hangul jungseong a
  '\u11AB', // Hangul jongseong nieun
  'ṩ', // s + dot below + dot above
  '\u{1F600}',
  '\u{1D11E}',
  '\uFFFD',
  '\uFF61',
  'a',
  'z',
  '0',
  ' ',
  '"',
  '\\',
  '\n',
  '\u0000',
  '\u2028',
];

const composableString = fc.string({ unit: fc.constantFrom(...COMPOSABLE_UNITS), maxLength: 8 });
const anyString = fc.oneof(composableString, fc.string({ unit: 'binary', maxLength: 8 }), fc.string({ unit: 'grapheme', maxLength: 4 }));
const nfcString = anyString.map((s) => s.normalize('NFC'));

const finiteNumber = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
);

/** An arbitrary JSON value already in NFC, with keys unique after NFC. */
const { json } = fc.letrec<{ json: Json }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    finiteNumber,
    nfcString,
    fc.array(tie('json'), { maxLength: 4 }),
    fc
      .uniqueArray(fc.tuple(nfcString, tie('json')), { selector: ([k]) => k, maxLength: 5 })
      .map((entries) => Object.fromEntries(entries) as { [key: string]: Json }),
  ),
}));

/** Every string and every key in NFD: visually identical, different code points. */
function toNfd(value: Json): Json {
  if (typeof value === 'string') return value.normalize('NFD');
  if (Array.isArray(value)) return value.map(toNfd);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.normalize('NFD'), toNfd(v)]));
  }
  return value;
}

/** A small deterministic PRNG so a shuffle is reproducible from a fast-check seed. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Same value, every object's keys inserted in a different order, recursively. */
function shuffleKeys(value: Json, rand: () => number): Json {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, rand));
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    for (let i = entries.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [entries[i], entries[j]] = [entries[j]!, entries[i]!];
    }
    return Object.fromEntries(entries.map(([k, v]) => [k, shuffleKeys(v, rand)]));
  }
  return value;
}

const utf8Order = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

function refusal(value: unknown): CanonicalizationError {
  try {
    canonicalJson(value);
  } catch (error) {
    expect(error).toBeInstanceOf(CanonicalizationError);
    return error as CanonicalizationError;
  }
  throw new Error('canonicalJson accepted a value it must refuse');
}

function nested(depth: number, kind: 'array' | 'object'): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = kind === 'array' ? [value] : { k: value };
  return value;
}

describe('canonicalJson: invariance (Hard gate 9)', () => {
  it('is invariant under recursive key reordering', () => {
    fc.assert(
      fc.property(json, fc.integer(), (value, seed) => {
        const shuffled = shuffleKeys(value, mulberry32(seed));
        expect(canonicalJson(shuffled)).toBe(canonicalJson(value));
        expect(argumentsHash(shuffled)).toBe(argumentsHash(value));
      }),
      { numRuns: 300 },
    );
  });

  it('is invariant under Unicode recomposition of every string and key (NFC vs NFD)', () => {
    fc.assert(
      fc.property(json, fc.integer(), (value, seed) => {
        const decomposed = toNfd(value);
        const both = shuffleKeys(decomposed, mulberry32(seed));
        const expected = canonicalJson(value);
        expect(canonicalJson(decomposed)).toBe(expected);
        expect(canonicalJson(both)).toBe(expected);
        expect(argumentsHash(both)).toBe(argumentsHash(value));
      }),
      { numRuns: 300 },
    );
  });

  it('round-trips: JSON.parse of the canonical form deep-equals the NFC input', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(JSON.parse(canonicalJson(toNfd(value)))).toStrictEqual(value);
      }),
      { numRuns: 300 },
    );
  });

  it('composed and decomposed spellings of the same text hash alike', () => {
    const composed = { café: 'Åström 한국', path: '/tmp/résumé.txt' };
    const decomposed = { 'cafe\u0301': 'A\u030Astro\u0308m \u1112\u1161\u11AB\u1100\u116E\u11A8', path: '/tmp/re\u0301sume\u0301.txt' };
    expect(JSON.stringify(composed)).not.toBe(JSON.stringify(decomposed));
    expect(canonicalJson(decomposed)).toBe(canonicalJson(composed));
    expect(canonicalJson(decomposed)).toBe('{"café":"Åström 한국","path":"/tmp/résumé.txt"}');
    expect(argumentsHash(decomposed)).toBe(argumentsHash(composed));
  });

  it('differs when the value differs', () => {
    expect(argumentsHash({ a: 1 })).not.toBe(argumentsHash({ a: 2 }));
    expect(argumentsHash({ a: '1' })).not.toBe(argumentsHash({ a: 1 }));
    expect(argumentsHash([1, 2])).not.toBe(argumentsHash([2, 1]));
  });
});

describe('canonicalJson: the form', () => {
  it('sorts keys, uses no whitespace', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'x'], c: { z: 0, y: -1.5 } })).toBe('{"a":[true,null,"x"],"b":1,"c":{"y":-1.5,"z":0}}');
    expect(canonicalJson({})).toBe('{}');
    expect(canonicalJson([])).toBe('[]');
  });

  it('sorts keys by code point, not by UTF-16 code unit (astral vs U+FFxx)', () => {
    // U+1F600 is encoded as D83D DE00 in UTF-16, so a UTF-16 sort puts it before U+FF61
    // and U+FFFD; by code point (and by UTF-8 bytes) it comes after both.
    const value = { '\u{1F600}': 1, '\uFFFD': 2, '\uFF61': 3, z: 4, é: 5 };
    expect(Object.keys(value).sort()).toEqual(['z', 'é', '\u{1F600}', '\uFF61', '\uFFFD']);
    expect(canonicalJson(value)).toBe('{"z":4,"é":5,"\uFF61":3,"\uFFFD":2,"\u{1F600}":1}');
    expect(compareCodePoints('\u{1F600}', '\uFFFD')).toBeGreaterThan(0);
    expect(compareCodePoints('\uFFFD', '\u{1F600}')).toBeLessThan(0);
    expect(compareCodePoints('a\u{1F600}', 'a\u{1F600}')).toBe(0);
    expect(compareCodePoints('a\u{1F600}', 'a\u{1F600}b')).toBeLessThan(0);
    expect(compareCodePoints('\u{1F600}', '\u{1F601}')).toBeLessThan(0);
  });

  it('compareCodePoints agrees with UTF-8 byte order for any well-formed strings', () => {
    fc.assert(
      fc.property(anyString, anyString, (a, b) => {
        expect(Math.sign(compareCodePoints(a, b))).toBe(Math.sign(utf8Order(a, b)));
      }),
      { numRuns: 500 },
    );
  });

  it('orders the keys of any object by UTF-8 bytes (independent oracle)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(nfcString, { maxLength: 12 }), (keys) => {
        const value = Object.fromEntries(keys.map((k, i) => [k, i]));
        const expected =
          '{' +
          [...keys]
            .sort(utf8Order)
            .map((k) => `${JSON.stringify(k)}:${keys.indexOf(k)}`)
            .join(',') +
          '}';
        expect(canonicalJson(value)).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('renders integers as integers, including at and above 1e21', () => {
    expect(canonicalJson(1e21)).toBe('1000000000000000000000');
    expect(canonicalJson(-1e21)).toBe('-1000000000000000000000');
    expect(canonicalJson(2 ** 53)).toBe('9007199254740992');
    expect(canonicalJson(2 ** 70)).toBe('1180591620717411303424');
    expect(canonicalJson(-5)).toBe('-5');
    expect(canonicalJson(0)).toBe('0');
    expect(canonicalJson(1.0)).toBe('1');
    expect(canonicalJson({ n: 1e21 })).toBe('{"n":1000000000000000000000}');
  });

  it('renders every integral double without exponent or fraction, and it parses back exactly', () => {
    fc.assert(
      fc.property(
        fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => Number.isInteger(n) && !Object.is(n, -0)),
        (n) => {
          const text = canonicalJson(n);
          expect(text).toMatch(/^-?(0|[1-9][0-9]*)$/);
          expect(JSON.parse(text)).toBe(n);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('renders non-integers in shortest round-trip form', () => {
    expect(canonicalJson(0.1)).toBe('0.1');
    expect(canonicalJson(1.5e-7)).toBe('1.5e-7');
    expect(canonicalJson(-2.5)).toBe('-2.5');
    expect(canonicalJson(0.1 + 0.2)).toBe('0.30000000000000004');
    expect(canonicalJson(5e-324)).toBe('5e-324');
    fc.assert(
      fc.property(
        fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n)),
        (n) => {
          const text = canonicalJson(n);
          expect(JSON.parse(text)).toBe(n);
          // Shortest: one significant digit fewer no longer round-trips.
          const digits = text.replace(/^-/, '').split('e')[0]!.replace('.', '').replace(/^0+/, '').length;
          if (digits > 1) expect(Number(n.toPrecision(digits - 1))).not.toBe(n);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('escapes strings as JSON and keeps non-ASCII as UTF-8', () => {
    expect(canonicalJson('a"b\\c\n\u0000')).toBe('"a\\"b\\\\c\\n\\u0000"');
    expect(canonicalJson('\u{1F600}')).toBe('"\u{1F600}"');
  });

  it('accepts null-prototype objects like plain ones', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { b: 2, a: 1 });
    expect(canonicalJson(bare)).toBe('{"a":1,"b":2}');
  });
});

describe('argumentsHash', () => {
  it('is 64 lowercase hex: sha256 of the canonical form as UTF-8', () => {
    fc.assert(
      fc.property(json, (value) => {
        const hash = argumentsHash(value);
        expect(hash).toMatch(/^[0-9a-f]{64}$/);
        const expected = createHash('sha256')
          .update(Buffer.from(canonicalJson(value), 'utf8'))
          .digest('hex');
        expect(hash).toBe(expected);
      }),
      { numRuns: 200 },
    );
  });

  it('hashes the UTF-8 bytes, not UTF-16 or Latin-1', () => {
    const value = { é: '\u{1F600}' };
    const utf8 = createHash('sha256').update(Buffer.from('{"é":"\u{1F600}"}', 'utf8')).digest('hex');
    const utf16 = createHash('sha256').update(Buffer.from('{"é":"\u{1F600}"}', 'utf16le')).digest('hex');
    expect(argumentsHash(value)).toBe(utf8);
    expect(argumentsHash(value)).not.toBe(utf16);
  });

  it('completes on a 10 MB string argument', () => {
    const big = 'é'.normalize('NFD').repeat(Math.floor((5 * 1024 * 1024) / 3)) + 'x'.repeat(5 * 1024 * 1024);
    expect(Buffer.byteLength(big, 'utf8')).toBeGreaterThanOrEqual(10 * 1024 * 1024 - 3);
    const hash = argumentsHash({ content: big });
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).toBe(argumentsHash({ content: big.normalize('NFC') }));
  });
});

describe('canonicalJson: refusals are typed, with stable codes', () => {
  it.each([
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
  ])('%s is canonical.non_finite_number', (_label, n) => {
    expect(refusal(n).code).toBe('canonical.non_finite_number');
    expect(refusal({ a: [n] }).code).toBe('canonical.non_finite_number');
  });

  it('-0 is canonical.negative_zero, also nested, with a JSON Pointer path', () => {
    expect(refusal(-0).code).toBe('canonical.negative_zero');
    const nestedError = refusal({ a: [1, { 'b/c': -0 }] });
    expect(nestedError.code).toBe('canonical.negative_zero');
    expect(nestedError.path).toBe('/a/1/b~1c');
    // +0 is fine; only the sign is refused.
    expect(canonicalJson({ a: [1, { b: 0 }] })).toBe('{"a":[1,{"b":0}]}');
  });

  it.each([
    ['lone high surrogate', '\uD800'],
    ['lone low surrogate', 'a\uDC00b'],
    ['reversed pair', '\uDE00\uD83D'],
    ['high surrogate at the end', 'abc\uD83D'],
  ])('a %s in a value is canonical.lone_surrogate', (_label, s) => {
    expect(refusal(s).code).toBe('canonical.lone_surrogate');
    expect(refusal({ x: [s] }).path).toBe('/x/0');
  });

  it('a lone surrogate in a key is canonical.lone_surrogate', () => {
    expect(refusal({ '\uD83D': 1 }).code).toBe('canonical.lone_surrogate');
    expect(refusal({ ok: { 'k\uDE00': 1 } }).code).toBe('canonical.lone_surrogate');
    // A well-formed pair is not a lone surrogate.
    expect(canonicalJson({ '\uD83D\uDE00': '\uD83D\uDE00' })).toBe('{"\u{1F600}":"\u{1F600}"}');
  });

  it('keys that collide after NFC are canonical.key_collision, in either insertion order', () => {
    expect(refusal({ 'e\u0301': 1, é: 2 }).code).toBe('canonical.key_collision');
    expect(refusal({ é: 2, 'e\u0301': 1 }).code).toBe('canonical.key_collision');
    expect(refusal({ deep: { '\u212B': 1, Å: 2 } }).code).toBe('canonical.key_collision');
  });

  it.each(['array', 'object'] as const)('10,000 levels of %s nesting is canonical.too_deep, not a RangeError', (kind) => {
    const started = performance.now();
    const error = refusal(nested(10_000, kind));
    expect(error.code).toBe('canonical.too_deep');
    expect(error).not.toBeInstanceOf(RangeError);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('the depth limit is exact: CANONICAL_MAX_DEPTH levels pass, one more fails', () => {
    expect(canonicalJson(nested(CANONICAL_MAX_DEPTH, 'array'))).toBe(
      `${'['.repeat(CANONICAL_MAX_DEPTH)}1${']'.repeat(CANONICAL_MAX_DEPTH)}`,
    );
    expect(refusal(nested(CANONICAL_MAX_DEPTH + 1, 'array')).code).toBe('canonical.too_deep');
  });

  it('a cyclic value is canonical.too_deep rather than a stack overflow', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(refusal(cyclic).code).toBe('canonical.too_deep');
  });

  it.each([
    ['undefined', undefined],
    ['undefined in an object', { a: undefined }],
    ['undefined in an array', [1, undefined]],
    // biome-ignore lint/suspicious/noSparseArray: the hole is the subject of this case.
    ['an array hole', [1, , 3]],
    ['a function', () => 1],
    ['a bigint', 10n],
    ['a nested bigint', { n: [1n] }],
    ['a symbol', Symbol('s')],
    ['a Date', new Date(0)],
    ['a Map', new Map([['a', 1]])],
    ['a Set', new Set([1])],
    ['a boxed string', Object('x') as unknown],
    [
      'a class instance',
      new (class Point {
        x = 1;
      })(),
    ],
  ])('%s is canonical.unsupported_type', (_label, value) => {
    expect(refusal(value).code).toBe('canonical.unsupported_type');
  });

  it('refusals are VeetbotErrors, not retryable, and argumentsHash refuses alike', () => {
    const error = refusal({ a: NaN });
    expect(VeetbotError.isInstance(error)).toBe(true);
    expect(error.retryable).toBe(false);
    expect(error.name).toBe('CanonicalizationError');
    expect(error.path).toBe('/a');
    expect(() => argumentsHash({ a: NaN })).toThrow(CanonicalizationError);
  });
});

describe('canonicalJson: the JSON.stringify fast path writes what the writer writes', () => {
  // ASCII-heavy values reach the fast path; integer-like keys ("10" before "9" in code-point
  // order, the other way round in V8's own key order) and huge integers must not.
  const asciiKey = fc.oneof(
    fc.string({ unit: fc.constantFrom('a', 'b', 'z', 'A', '_', '"', '\\', '\n'), maxLength: 4 }),
    fc.integer({ min: 0, max: 20 }).map(String),
  );
  const asciiValue = fc.letrec<{ v: Json }>((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
      fc.constantFrom(1e21, 2 ** 70, -1e22, 1e-7, 0.1),
      fc.string({ unit: fc.constantFrom('a', ' ', '"', '\\', '\u0001', '\u007f'), maxLength: 6 }),
      anyString,
      fc.array(tie('v'), { maxLength: 4 }),
      fc.dictionary(asciiKey, tie('v'), { maxKeys: 5 }),
    ),
  })).v;

  it('is identical to the writer on every value, and refuses what the writer refuses', () => {
    fc.assert(
      fc.property(asciiValue, (value) => {
        let fast: string | Error;
        let slow: string | Error;
        try {
          fast = canonicalJson(value);
        } catch (error) {
          fast = error as Error;
        }
        try {
          slow = canonicalJsonByWriter(value);
        } catch (error) {
          slow = error as Error;
        }
        expect(fast).toEqual(slow);
      }),
      { numRuns: 2_000 },
    );
  });

  it('takes the writer for integer-like keys, -0, huge integers and undefined', () => {
    expect(canonicalJson({ 9: 'a', 10: 'b' })).toBe('{"10":"b","9":"a"}');
    expect(canonicalJson({ b: 1, a: [1e21] })).toBe('{"a":[1000000000000000000000],"b":1}');
    expect(() => canonicalJson({ a: -0 })).toThrow(CanonicalizationError);
    expect(() => canonicalJson([undefined])).toThrow(CanonicalizationError);
    expect(() => canonicalJson({ toJSON: () => 1 })).toThrow(CanonicalizationError);
  });
});
