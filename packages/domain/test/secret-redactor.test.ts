import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MIN_BASE64_REDACTED_BYTES, MIN_REDACTED_LENGTH } from '../src/secret-redactor';
import { REDACTED, SecretRedactor } from '../src/index';

/** Every character a serializer escapes, and the ones URL and base64 alphabets care about. */
const ESCAPE_WORTHY = [
  '"',
  '\\',
  '/',
  '\n',
  '\r',
  '\t',
  '\b',
  '\f',
  '\u0000',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u0080',
  '\u00a0',
  '\u2028',
  '\u2029',
  '\ufeff',
  'é',
  'É',
  'ß',
  '€',
  '中',
  '😀',
  '👩‍👩‍👧',
  '\ud800',
  '\udfff',
  '+',
  '/',
  '=',
  '%',
  ' ',
  '&',
  '?',
  '#',
  '<',
  '>',
  "'",
  '`',
  '[',
  ']',
  '{',
  '}',
  ':',
  ',',
  '-',
  '_',
  '.',
  '~',
];
const character = fc.oneof(
  fc.constantFrom(...ESCAPE_WORTHY),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
);
const secretArb = fc
  .string({ unit: character, minLength: MIN_REDACTED_LENGTH, maxLength: 24 })
  .filter((s) => Buffer.byteLength(s, 'utf8') >= MIN_BASE64_REDACTED_BYTES && s.length >= MIN_REDACTED_LENGTH);
const surrounding = fc.string({ unit: character, maxLength: 12 });

const hasLoneSurrogate = (s: string): boolean => /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
const asciiJson = (s: string, upper: boolean): string =>
  JSON.stringify(s)
    .slice(1, -1)
    .replace(/[^\x20-\x7e]/g, (c) => {
      const h = c.charCodeAt(0).toString(16).padStart(4, '0');
      return `\\u${upper ? h.toUpperCase() : h}`;
    });

/** The encodings a result can carry a secret in (ADR 0018). Null: not defined for this value. */
const ENCODINGS: readonly [string, (s: string) => string | null][] = [
  ['raw', (s) => s],
  ['JSON-escaped', (s) => JSON.stringify(s).slice(1, -1)],
  ['JSON-escaped with \\/', (s) => JSON.stringify(s).slice(1, -1).replace(/\//g, '\\/')],
  ['JSON-escaped ASCII-only, lowercase hex', (s) => asciiJson(s, false)],
  ['JSON-escaped ASCII-only, uppercase hex', (s) => asciiJson(s, true)],
  ['JSON inside JSON', (s) => JSON.stringify(JSON.stringify(s)).slice(1, -1)],
  ['encodeURIComponent', (s) => (hasLoneSurrogate(s) ? null : encodeURIComponent(s))],
  [
    'encodeURIComponent, lowercase hex',
    (s) => (hasLoneSurrogate(s) ? null : encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())),
  ],
  ['form encoding', (s) => (hasLoneSurrogate(s) ? null : new URLSearchParams({ k: s }).toString().slice(2))],
  ['base64', (s) => Buffer.from(s, 'utf8').toString('base64')],
  ['base64 without padding', (s) => Buffer.from(s, 'utf8').toString('base64').replace(/=+$/, '')],
  ['base64url', (s) => Buffer.from(s, 'utf8').toString('base64url')],
  [
    'base64 of the RFC 6749 form-encoded value (HTTP Basic)',
    (s) => (hasLoneSurrogate(s) ? null : Buffer.from(encodeURIComponent(s).replace(/%20/g, '+'), 'utf8').toString('base64')),
  ],
  [
    'base64 of the WHATWG form-encoded value',
    (s) => (hasLoneSurrogate(s) ? null : Buffer.from(new URLSearchParams({ k: s }).toString().slice(2), 'utf8').toString('base64')),
  ],
];

/** What is left of `output` outside the markers: a form spanning a marker is not a leak. */
const pieces = (output: string): string[] => output.split(REDACTED);
const leaks = (output: string, form: string): boolean => pieces(output).some((piece) => piece.includes(form));

function strings(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value))
    value.forEach((v) => {
      strings(v, into);
    });
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      into.push(k);
      strings(v, into);
    }
  }
  return into;
}

const redactorOf = (...values: string[]): SecretRedactor => {
  const redactor = new SecretRedactor();
  for (const v of values) redactor.add(v);
  return redactor;
};

describe('SecretRedactor: a secret in every form, in text and in structured results', () => {
  for (const [name, encode] of ENCODINGS) {
    it(`${name}: embedded in text and in structured output, nothing of it is left`, () => {
      fc.assert(
        fc.property(secretArb, surrounding, surrounding, (secret, before, after) => {
          const form = encode(secret);
          fc.pre(form !== null && form.length > 0);
          const redactor = redactorOf(secret);
          expect(leaks(redactor.redactText(`${before}${form}${after}`), form!)).toBe(false);
          const structured = redactor.redact({ [`${before}${form}`]: [`${before}${form}${after}`, { nested: form, n: 1 }], plain: after });
          for (const s of strings(structured)) expect(leaks(s, form!)).toBe(false);
        }),
        { numRuns: 150 },
      );
    });
  }

  it('base64 of a secret inside a longer base64 string, at each of the three byte alignments', () => {
    fc.assert(
      fc.property(
        secretArb,
        fc.uint8Array({ maxLength: 9 }),
        fc.uint8Array({ maxLength: 9 }),
        fc.boolean(),
        (secret, before, after, urlSafe) => {
          const bytes = Buffer.from(secret, 'utf8');
          const whole = Buffer.concat([before, bytes, after]).toString(urlSafe ? 'base64url' : 'base64');
          // The characters that encode only the secret's bytes, wherever it sits.
          const k = before.length % 3;
          const core = Buffer.concat([Buffer.alloc(k), bytes])
            .toString(urlSafe ? 'base64url' : 'base64')
            .slice(Math.ceil((8 * k) / 6), Math.floor((8 * (k + bytes.length)) / 6));
          expect(whole).toContain(core);
          expect(leaks(redactorOf(secret).redactText(`data:${whole}`), core)).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a mix of escapes in one occurrence is still the secret', () => {
    const secret = 'p"a\\s/s é\n😀';
    const mixed = 'p\\"a\\\\s\\/s%20\\u00E9\\n\\ud83d\\ude00';
    expect(redactorOf(secret).redactText(`x${mixed}y`)).toBe(`x${REDACTED}y`);
  });

  it('server-everything get-env: the credential inside JSON text comes back redacted', () => {
    const secret = 'tok"en\\with-quote';
    const text = JSON.stringify({ PATH: '/usr/bin', API_TOKEN: secret }, null, 2);
    expect(redactorOf(secret).redactText(text)).toBe(JSON.stringify({ PATH: '/usr/bin', API_TOKEN: REDACTED }, null, 2));
  });

  it('overlapping and repeated occurrences become one marker; several secrets merge', () => {
    expect(redactorOf('aaaa').redactText('xaaaaaaaay')).toBe(`x${REDACTED}${REDACTED}y`);
    expect(redactorOf('abcdefgh', 'efghijkl').redactText('-abcdefghijkl-')).toBe(`-${REDACTED}-`);
    expect(redactorOf('secret-one').redactText('secret-one secret-one')).toBe(`${REDACTED} ${REDACTED}`);
  });

  it(`values shorter than ${MIN_REDACTED_LENGTH} characters are not redacted, and base64 only from ${MIN_BASE64_REDACTED_BYTES} bytes`, () => {
    const short = redactorOf('abc');
    expect(short.size).toBe(0);
    expect(short.redactText('abcabc')).toBe('abcabc');
    const fourChars = redactorOf('wxyz');
    expect(fourChars.redactText('wxyz')).toBe(REDACTED);
    expect(fourChars.redactText(Buffer.from('wxyz').toString('base64'))).toBe('d3h5eg==');
    expect(redactorOf('wxyz1234').redactText(Buffer.from('wxyz1234').toString('base64'))).toBe(REDACTED);
  });

  it('structured results: keys and values, __proto__ stays data, deep nesting and cycles do not crash', () => {
    const redactor = redactorOf('hunter2-secret');
    const hostile = JSON.parse('{"__proto__": {"polluted": "hunter2-secret"}, "hunter2-secret": 1}') as Record<string, unknown>;
    const out = redactor.redact(hostile);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__', REDACTED]);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({ polluted: REDACTED });
    let deep: unknown = 'hunter2-secret';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    let walked = redactor.redact(deep);
    for (let i = 0; i < 100_000; i++) walked = (walked as unknown[])[0];
    expect(walked).toBe(REDACTED);
    const cyclic: Record<string, unknown> = { token: 'hunter2-secret' };
    cyclic.self = cyclic;
    const copy = redactor.redact(cyclic);
    expect(copy.token).toBe(REDACTED);
    expect(copy.self).toBe(copy);
    expect(cyclic.token).toBe('hunter2-secret');
  });

  it('a 64 KiB credential (a credential file at the broker limit) in a 512 KiB result, and a periodic one in a periodic text', () => {
    const big = 'k-"\\/é'.repeat(Math.floor((64 * 1024) / 7)); // 7 UTF-8 bytes a repeat: 65,534 bytes
    expect(Buffer.byteLength(big)).toBe(65_534);
    const redactor = redactorOf(big);
    const text = `${'x'.repeat(512 * 1024)}${big}|${JSON.stringify(big)}|${Buffer.from(big).toString('base64')}`;
    expect(redactor.redactText(text)).toBe(`${'x'.repeat(512 * 1024)}${REDACTED}|"${REDACTED}"|${REDACTED}`);
    const periodic = redactorOf('a'.repeat(4096));
    expect(periodic.redactText('a'.repeat(4096 * 64))).toBe(REDACTED.repeat(64));
  });

  it('a hostile text of near-occurrences of a repetitive value is replaced whole, not scanned for minutes', () => {
    const backslashes = redactorOf('\\'.repeat(4096));
    // Every start is a near-occurrence that fails only at the end of the text.
    expect(backslashes.redactText('\\'.repeat(4095))).toBe(REDACTED);
    expect(backslashes.redactText(`ok ${'\\'.repeat(100)} ok`)).toBe(`ok ${'\\'.repeat(100)} ok`);
  });

  it('an empty redactor returns its input unchanged; unrelated text is untouched', () => {
    const value = { a: ['b'] };
    expect(new SecretRedactor().redact(value)).toBe(value);
    expect(redactorOf('s3cr3t-value').redactText('nothing to see, s3cr3t-valu')).toBe('nothing to see, s3cr3t-valu');
  });
});
