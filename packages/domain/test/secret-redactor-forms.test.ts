import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REDACTED, SecretRedactor } from '../src/index';

/**
 * Issue 23 item 13 (docs/adr/0053): the forms a hostile server reflects a secret in beyond ADR
 * 0018's — hex in either case, HTML character references (decimal, hex, named), and a secret
 * split across a result's text items — and the sweep of the forms ADR 0018 already covered.
 * Each case: the form is what a real encoder produces, and the redacted text keeps no form of it.
 */
const SECRET = 'tok&en<"sé/cret>-4f2a9c';

const redactorOf = (...values: string[]): SecretRedactor => {
  const redactor = new SecretRedactor();
  for (const value of values) redactor.add(value);
  return redactor;
};

const hexOf = (value: string) => Buffer.from(value, 'utf8').toString('hex');
const decimalReferences = (value: string) => [...value].map((c) => `&#${c.codePointAt(0)};`).join('');
const hexReferences = (value: string, upper = false) =>
  [...value].map((c) => `&#${upper ? 'X' : 'x'}${c.codePointAt(0)!.toString(16)[upper ? 'toUpperCase' : 'toLowerCase']()};`).join('');
/** What an HTML escaper writes (the five characters it must escape, named; the rest raw). */
const htmlEscape = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);

describe('SecretRedactor: hex of the secret (docs/adr/0053)', () => {
  const redactor = redactorOf(SECRET);
  it.each([
    ['lower case', hexOf(SECRET)],
    ['upper case', hexOf(SECRET).toUpperCase()],
    ['mixed case', [...hexOf(SECRET)].map((c, i) => (i % 3 === 0 ? c.toUpperCase() : c)).join('')],
    ['\\x escapes', hexOf(SECRET).replace(/../g, '\\x$&')],
    ['\\X escapes, upper case', hexOf(SECRET).toUpperCase().replace(/../g, '\\x$&')],
  ])('%s', (_, form) => {
    const text = `dump: 0x${form} (end)`;
    const out = redactor.redactText(text);
    expect(out).toBe(`dump: 0x${REDACTED} (end)`);
  });

  it('inside a longer hex dump, at an odd byte offset', () => {
    const dump = `00ff${hexOf(SECRET)}abcdef`;
    const out = redactor.redactText(dump);
    expect(out).not.toContain(hexOf(SECRET));
    expect(out).toBe(`00ff${REDACTED}abcdef`);
  });

  it('a 4-character secret (8 hex digits) and no chance match in unrelated hex', () => {
    const short = redactorOf('k3y!');
    expect(short.redactText(`id=${hexOf('k3y!').toUpperCase()}`)).toBe(`id=${REDACTED}`);
    expect(short.redactText('sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')).toBe(
      'sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
  });
});

describe('SecretRedactor: HTML character references (docs/adr/0053)', () => {
  const redactor = redactorOf(SECRET);
  it.each([
    ['decimal, every character', decimalReferences(SECRET)],
    ['hex, every character', hexReferences(SECRET)],
    ['hex, upper-case X and digits', hexReferences(SECRET, true)],
    ['decimal with leading zeros', [...SECRET].map((c) => `&#000${c.codePointAt(0)};`).join('')],
    ['decimal without the ;', [...SECRET].map((c) => `&#${c.codePointAt(0)}`).join('')],
    ['named, as an HTML escaper writes it', htmlEscape(SECRET)],
    ['named, upper-case legacy spellings', SECRET.replace('&', '&AMP;').replace('<', '&LT;').replace('"', '&QUOT;').replace('>', '&GT;')],
    ['named without the ; (legacy)', SECRET.replace('&', '&amp').replace('<', '&lt')],
    ['named punctuation beyond the five', SECRET.replace('/', '&sol;').replace('-', '&#45;')],
    [
      'a mix of raw, named, decimal and hex',
      [...htmlEscape(SECRET)].join('').replace('s', '&#115;').replace('c', '&#x63;').replace('é', '&#xE9;'),
    ],
  ])('%s', (_, form) => {
    const text = `<p title="x">${form}</p>`;
    const out = redactor.redactText(text);
    expect(out).toBe(`<p title="x">${REDACTED}</p>`);
  });

  it('an astral character as one reference', () => {
    const astral = redactorOf('key😀value');
    expect(astral.redactText('a key&#128512;value b')).toBe(`a ${REDACTED} b`);
    expect(astral.redactText('a key&#x1F600;value b')).toBe(`a ${REDACTED} b`);
  });

  it('a reference that decodes to another character is not the secret', () => {
    const out = redactor.redactText(`${decimalReferences(SECRET).replace('&#115;', '&#116;')}`);
    expect(out).not.toContain(REDACTED);
  });

  it('property: any secret, every character as a decimal or hex reference at random, is redacted', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', minLength: 4, maxLength: 24 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 24, maxLength: 24 }),
        (secret, choices) => {
          fc.pre([...secret].length >= 4 && !/[\ud800-\udfff]/.test(secret.replace(/[\ud800-\udbff][\udc00-\udfff]/g, '')));
          const encoded = [...secret]
            .map((c, i) => {
              const cp = c.codePointAt(0)!;
              return [c, `&#${cp};`, `&#x${cp.toString(16)};`, `&#X${cp.toString(16).toUpperCase()};`][choices[i % choices.length]!]!;
            })
            .join('');
          const out = redactorOf(secret).redactText(`[${encoded}]`);
          expect(out).toBe(`[${REDACTED}]`);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('SecretRedactor: the forms ADR 0018 already covered, swept again (docs/adr/0053)', () => {
  const redactor = redactorOf(SECRET);
  it.each([
    ['raw', SECRET],
    ['base64', Buffer.from(SECRET).toString('base64')],
    ['base64 unpadded', Buffer.from(SECRET).toString('base64').replace(/=+$/, '')],
    ['base64url', Buffer.from(SECRET).toString('base64url')],
    ['URL-encoded', encodeURIComponent(SECRET)],
    ['URL-encoded, lower-case hex', encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())],
    ['every byte percent-encoded', [...Buffer.from(SECRET)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')],
    ['JSON-escaped', JSON.stringify(SECRET).slice(1, -1)],
    ['JSON \\u00xx, every character, lower-case', [...SECRET].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')],
    [
      'JSON \\u00XX, every character, upper-case',
      [...SECRET].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`).join(''),
    ],
  ])('%s', (_, form) => {
    expect(redactor.redactText(`<<${form}>>`)).toBe(`<<${REDACTED}>>`);
  });
});

describe('SecretRedactor.redactAcross: a secret split across text items (docs/adr/0053)', () => {
  const redactor = redactorOf(SECRET);

  it('two items, each with one half: both halves are replaced', () => {
    const cut = 9;
    const out = redactor.redactAcross([`first item says ${SECRET.slice(0, cut)}`, `${SECRET.slice(cut)} and more`]);
    expect(out).toEqual([`first item says ${REDACTED}`, `${REDACTED} and more`]);
    for (const item of out) {
      expect(item).not.toContain(SECRET.slice(0, cut));
      expect(item).not.toContain(SECRET.slice(cut));
    }
  });

  it('three items, the middle one all secret; and split in its hex form', () => {
    const out = redactor.redactAcross(['a', SECRET.slice(0, 4), SECRET.slice(4, 12), `${SECRET.slice(12)}z`]);
    expect(out).toEqual(['a', REDACTED, REDACTED, `${REDACTED}z`]);
    const hex = hexOf(SECRET).toUpperCase();
    expect(redactor.redactAcross([`h=${hex.slice(0, 10)}`, `${hex.slice(10)};`])).toEqual([`h=${REDACTED}`, `${REDACTED};`]);
  });

  it('whole secrets inside items are redacted as redactText does; unrelated items are untouched', () => {
    expect(redactor.redactAcross([`x ${SECRET} y`, 'plain', encodeURIComponent(SECRET)])).toEqual([`x ${REDACTED} y`, 'plain', REDACTED]);
    expect(redactor.redactAcross(['tok', 'en'])).toEqual(['tok', 'en']);
  });

  it('property: wherever a secret is cut into items, no item keeps a piece of 4 or more of its characters', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme-ascii', minLength: 8, maxLength: 40 }),
        fc.integer({ min: 1, max: 39 }),
        fc.string({ unit: 'grapheme-ascii', maxLength: 8 }),
        fc.string({ unit: 'grapheme-ascii', maxLength: 8 }),
        (secret, at, before, after) => {
          fc.pre(at < secret.length);
          const out = redactorOf(secret).redactAcross([`${before}${secret.slice(0, at)}`, `${secret.slice(at)}${after}`]);
          expect(out.join('')).toContain(REDACTED);
          expect(out.join('|')).not.toContain(secret);
          expect(out[0]!.endsWith(REDACTED) || at === 0).toBe(true);
          expect(out[1]!.startsWith(REDACTED)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('SecretRedactor.redactResult: a result whose text items are read as one (docs/adr/0053)', () => {
  it('splits across text items are caught; other items and fields are redacted as redact does', () => {
    const redactor = redactorOf(SECRET);
    const image = { type: 'image', data: 'AAAA', mimeType: 'image/png' };
    const result = {
      ok: true,
      content: [{ type: 'text', text: `a ${SECRET.slice(0, 6)}` }, image, { type: 'text', text: `${SECRET.slice(6)} b` }],
      structured: { echoed: hexOf(SECRET) },
    };
    const out = redactor.redactResult(result);
    expect(out).toEqual({
      ok: true,
      content: [{ type: 'text', text: `a ${REDACTED}` }, image, { type: 'text', text: `${REDACTED} b` }],
      structured: { echoed: REDACTED },
    });
    // The input is not changed; a result without a secret comes back equal.
    expect(result.content[0]).toEqual({ type: 'text', text: `a ${SECRET.slice(0, 6)}` });
    const clean = {
      content: [
        { type: 'text', text: 'x' },
        { type: 'text', text: 'y' },
      ],
    };
    expect(redactor.redactResult(clean)).toEqual(clean);
  });
});
