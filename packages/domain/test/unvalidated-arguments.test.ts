import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compareCodePoints, UNVALIDATED_ARGUMENTS_KEY, unvalidatedRecord } from '../src';
import { isUnvalidatedArguments, receivedText, UNVALIDATED_TOOL_NAME_MAXIMUM_BYTES } from '../src/unvalidated-arguments';

const LIMIT = 1024;
const recordOf = (name: string, args: unknown, limit = LIMIT) => unvalidatedRecord(name, args, limit);
const inner = (name: string, args: unknown, limit = LIMIT) => recordOf(name, args, limit).stored[UNVALIDATED_ARGUMENTS_KEY];

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

describe('unvalidatedRecord (docs/adr/0020)', () => {
  it('keeps small canonical arguments as received, marked, and says so', () => {
    const stored = recordOf('demo.read', { n: 'one' }).stored;
    expect(stored).toEqual({
      [UNVALIDATED_ARGUMENTS_KEY]: { received: { n: 'one' }, excerpt: null, received_bytes: 11, truncated: false, tool_name: null },
    });
    expect(isUnvalidatedArguments(stored)).toBe(true);
    expect(isUnvalidatedArguments({ n: 'one' })).toBe(false);
  });

  it('different arguments or different raw names are different hashes; the same call is the same hash', () => {
    const a = recordOf('demo.read', { n: 'one' }).argumentsHash;
    expect(recordOf('demo.read', { n: 'one' }).argumentsHash).toBe(a);
    expect(recordOf('demo.read', { n: 'two' }).argumentsHash).not.toBe(a);
    expect(recordOf('Demo Read', { n: 'one' }).argumentsHash).not.toBe(a);
    expect(recordOf('IGNORE ALL', { n: 'one' }).argumentsHash).not.toBe(recordOf('IGNORE  ALL', { n: 'one' }).argumentsHash);
  });

  it('key order does not matter (a batch read back from jsonb has its keys reordered), NFC-equal text is the same call', () => {
    expect(recordOf('x.y', { b: 1, a: 2 }).argumentsHash).toBe(recordOf('x.y', { a: 2, b: 1 }).argumentsHash);
    expect(recordOf('x.y', { p: 'e\u0301' }).argumentsHash).toBe(recordOf('x.y', { p: '\u00e9' }).argumentsHash);
    // Non-canonical values take the fallback form, also key-order independent.
    expect(recordOf('x.y', { b: '\ud800', a: -0 }).argumentsHash).toBe(recordOf('x.y', { a: -0, b: '\ud800' }).argumentsHash);
  });

  it('a name and arguments cannot be shifted into each other', () => {
    expect(recordOf('a', '"b"').argumentsHash).not.toBe(recordOf('a"', 'b').argumentsHash);
    expect(recordOf('a\u0000b', null).argumentsHash).not.toBe(recordOf('a', 'b').argumentsHash);
  });

  it('hostile values never throw and are always storable: lone surrogates, NUL, -0, NaN, 10,000 levels deep, cycles', () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    const hostile: unknown[] = [
      { s: '\ud800' },
      { s: 'a\u0000b' },
      { '\u0000': 1 },
      { n: -0 },
      { n: Number.NaN },
      nested(10_000),
      cycle,
      undefined,
      () => 1,
      10n,
    ];
    const hashes = new Set<string>();
    for (const value of hostile) {
      const record = recordOf('x.y', value);
      hashes.add(record.argumentsHash);
      const kept = record.stored[UNVALIDATED_ARGUMENTS_KEY];
      // Structure only when canonical JSON without NUL; otherwise text, which jsonb always accepts.
      expect(JSON.stringify(record.stored)).not.toMatch(/(?<!\\)\\u0000|[\ud800-\udfff]/u);
      if (kept.received === null && value !== undefined) expect(typeof kept.excerpt).toBe('string');
    }
    expect(hashes.size).toBe(hostile.length);
    // Deeper than the canonical limit: kept as text, not as structure.
    expect(inner('x.y', nested(200)).received).toBeNull();
  });

  it('cuts arguments over the bound at a UTF-8 boundary with a marker; the hash covers everything', () => {
    const big = (tail: string) => ({ s: '€'.repeat(LIMIT) + tail });
    const kept = inner('x.y', big('a'));
    expect(kept.received).toBeNull();
    expect(kept.truncated).toBe(true);
    expect(kept.received_bytes).toBe(Buffer.byteLength(JSON.stringify(big('a')), 'utf8'));
    expect(kept.excerpt!.endsWith('…[truncated]')).toBe(true);
    const body = kept.excerpt!.slice(0, -'…[truncated]'.length);
    expect(Buffer.byteLength(body, 'utf8')).toBeLessThanOrEqual(LIMIT);
    expect(body).not.toMatch(/\ufffd/);
    expect(recordOf('x.y', big('a')).argumentsHash).not.toBe(recordOf('x.y', big('b')).argumentsHash);
  });

  it('keeps a malformed name for the audit trail, escaped and bounded; a registry name is not repeated', () => {
    expect(inner('demo.read', {}).tool_name).toBeNull();
    expect(inner('Not A Tool', {}).tool_name).toBe('Not A Tool');
    expect(inner('a\u0000\ud800', {}).tool_name).toBe('a\\u0000\\ud800');
    const long = inner('X'.repeat(10_000), {}).tool_name!;
    expect(long.endsWith('…[truncated]')).toBe(true);
    expect(Buffer.byteLength(long, 'utf8')).toBeLessThanOrEqual(UNVALIDATED_TOOL_NAME_MAXIMUM_BYTES + 20);
  });

  it('receivedText is JSON.stringify with keys in code-point order, for plain JSON values', () => {
    const hasNegativeZero = (v: unknown): boolean =>
      Object.is(v, -0) || (v !== null && typeof v === 'object' && Object.values(v as Record<string, unknown>).some(hasNegativeZero));
    const sorted = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(sorted)
        : v !== null && typeof v === 'object'
          ? Object.fromEntries(
              Object.keys(v)
                .sort(compareCodePoints)
                .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
            )
          : v;
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        // -0 is spelled out (JSON.stringify writes 0); integer-like keys are the one place a
        // plain object's own order differs from insertion order, so build the expectation as text.
        fc.pre(!hasNegativeZero(value) && !JSON.stringify(value).match(/"\d+":/));
        expect(receivedText(value)).toBe(JSON.stringify(sorted(value)));
      }),
    );
  });
});
