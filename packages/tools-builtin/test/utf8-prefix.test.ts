import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { completeUtf8Length, decodeUtf8Prefix } from '../src/workspace/utf8-prefix';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('completeUtf8Length', () => {
  it.each([
    ['ascii', bytes('abc'), 3],
    ['whole 2-byte char', bytes('é'), 2],
    ['first byte of a 2-byte char', bytes('aé').subarray(0, 2), 1],
    ['two of three bytes of €', bytes('a€').subarray(0, 3), 1],
    ['three of four bytes of 😀', bytes('a😀').subarray(0, 4), 1],
    ['whole 4-byte char', bytes('a😀'), 5],
    ['empty', new Uint8Array(), 0],
  ])('%s', (_name, input, expected) => {
    expect(completeUtf8Length(input)).toBe(expected);
  });
});

describe('decodeUtf8Prefix', () => {
  it('a cut anywhere in valid text decodes to a prefix losing less than one character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.nat(), (text, at) => {
        const encoded = bytes(text);
        const cut = encoded.length === 0 ? 0 : at % (encoded.length + 1);
        const decoded = decodeUtf8Prefix(encoded.subarray(0, cut), cut < encoded.length);
        expect(decoded.ok).toBe(true);
        if (!decoded.ok) return;
        expect(text.startsWith(decoded.text)).toBe(true);
        expect(decoded.bytes).toBe(bytes(decoded.text).length);
        expect(cut - decoded.bytes).toBeLessThan(4);
      }),
    );
  });

  it('refuses invalid UTF-8 even when not truncated', () => {
    expect(decodeUtf8Prefix(Uint8Array.from([0x61, 0xff]), false).ok).toBe(false);
    expect(decodeUtf8Prefix(Uint8Array.from([0xc3]), false).ok).toBe(false);
  });
});
