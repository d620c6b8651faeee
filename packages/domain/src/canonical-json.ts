import { createHash } from 'node:crypto';
import { CanonicalizationError } from './errors';
import { JSON_MAX_DEPTH, LONE_SURROGATE } from './json-input';

/**
 * Nesting beyond this is refused rather than recursed into, so an argument 10,000 levels
 * deep is a typed error and not a stack overflow. Far above any real tool schema (whose own
 * depth is capped at 16).
 */
export const CANONICAL_MAX_DEPTH = JSON_MAX_DEPTH;

/** Code-point order, which is UTF-8 byte order (§ canonical form: "sorted by UTF-8 code point"). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++; // skip the low surrogate of a pair we just compared whole
  }
  return a.length - b.length;
}

// A lone surrogate (LONE_SURROGATE) cannot be encoded as UTF-8, so it has no canonical form.

function pointer(path: readonly string[]): string {
  return path.length === 0 ? '' : `/${path.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
}

/** A refusal on its way up: each frame it passes adds its key, so paths cost nothing on success. */
class Refusal {
  readonly segments: string[] = [];
  constructor(
    readonly code: `canonical.${string}`,
    readonly message: string,
  ) {}
}

// ASCII is invariant under NFC, holds no surrogates, and sorts the same by code unit and by
// code point: the common case skips normalization and the code-point comparator.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range starts at NUL; the class matches any non-ASCII character
const NON_ASCII = /[^\x00-\x7f]/;

function canonicalString(value: string): string {
  if (!NON_ASCII.test(value)) return JSON.stringify(value);
  if (LONE_SURROGATE.test(value)) throw new Refusal('canonical.lone_surrogate', 'A string contains a lone UTF-16 surrogate.');
  return JSON.stringify(value.normalize('NFC'));
}

function canonicalNumber(value: number): string {
  if (Number.isNaN(value) || !Number.isFinite(value))
    throw new Refusal('canonical.non_finite_number', 'NaN and Infinity have no canonical form.');
  if (Object.is(value, -0)) throw new Refusal('canonical.negative_zero', '-0 has no canonical form.');
  // Integers as integers, including those at or above 1e21 where String() switches to
  // exponent form; other numbers in ECMAScript's shortest round-trip form.
  if (Number.isInteger(value) && Math.abs(value) >= 1e21) return BigInt(value).toString();
  return String(value);
}

function writeChild(segment: string, value: unknown, depth: number): string {
  try {
    if (value === undefined) throw new Refusal('canonical.unsupported_type', 'undefined is not a JSON value.');
    return write(value, depth);
  } catch (error) {
    if (error instanceof Refusal) error.segments.unshift(segment);
    throw error;
  }
}

function write(value: unknown, depth: number): string {
  if (depth > CANONICAL_MAX_DEPTH) throw new Refusal('canonical.too_deep', `Nesting deeper than ${CANONICAL_MAX_DEPTH} levels.`);
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return canonicalNumber(value);
    case 'string':
      return canonicalString(value);
    case 'object':
      break;
    default:
      throw new Refusal('canonical.unsupported_type', `A ${typeof value} is not a JSON value.`);
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      out += writeChild(String(i), value[i], depth + 1);
    }
    return `${out}]`;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw new Refusal('canonical.unsupported_type', 'Only plain objects are JSON objects.');
  const record = value as Record<string, unknown>;
  const rawKeys = Object.keys(record);
  let asciiKeys = true;
  for (const key of rawKeys) {
    if (NON_ASCII.test(key)) {
      asciiKeys = false;
      break;
    }
  }
  let out = '{';
  if (asciiKeys) {
    rawKeys.sort();
    for (let i = 0; i < rawKeys.length; i++) {
      const key = rawKeys[i]!;
      if (i > 0) out += ',';
      out += `${JSON.stringify(key)}:${writeChild(key, record[key], depth + 1)}`;
    }
    return `${out}}`;
  }
  const entries = new Map<string, unknown>();
  for (const rawKey of rawKeys) {
    if (LONE_SURROGATE.test(rawKey)) throw new Refusal('canonical.lone_surrogate', 'A key contains a lone UTF-16 surrogate.');
    const key = rawKey.normalize('NFC');
    if (entries.has(key)) {
      // Two keys that differ only in Unicode composition would silently overwrite one another.
      const refusal = new Refusal('canonical.key_collision', 'Two keys are equal after NFC normalization.');
      refusal.segments.push(key);
      throw refusal;
    }
    entries.set(key, record[rawKey]);
  }
  const keys = [...entries.keys()].sort(compareCodePoints);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (i > 0) out += ',';
    out += `${JSON.stringify(key)}:${writeChild(key, entries.get(key), depth + 1)}`;
  }
  return `${out}}`;
}

/**
 * Whether JSON.stringify already writes `value`'s canonical form: every object a plain one
 * whose own keys are ASCII and already in sorted order (V8 lists integer-like keys first, in
 * numeric order, so "10" before "9" fails this and takes the writer), every string ASCII
 * (invariant under NFC, no surrogates; JSON.stringify escapes as canonicalString does), every
 * number finite, not -0, and not an integer String() would write in exponent form, no
 * undefined, function or other non-JSON value, and no deeper than CANONICAL_MAX_DEPTH. Only
 * checks, allocates nothing; anything else takes `write`, which also reports refusals.
 */
function stringifiesCanonically(value: unknown, depth: number): boolean {
  if (depth > CANONICAL_MAX_DEPTH) return false;
  if (value === null) return true;
  switch (typeof value) {
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0) && !(Math.abs(value) >= 1e21);
    case 'string':
      return !NON_ASCII.test(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!stringifiesCanonically(value[i], depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (NON_ASCII.test(key) || (i > 0 && !(keys[i - 1]! < key))) return false;
    if (!stringifiesCanonically(record[key], depth + 1)) return false;
  }
  return true;
}

/**
 * § Argument validation and the canonical form: keys sorted by code point, no whitespace,
 * strings NFC, integers as integers, shortest round-trip numbers; NaN, ±Infinity and -0
 * rejected with a CanonicalizationError.
 */
export function canonicalJson(value: unknown): string {
  // The common case — ASCII, keys already sorted — is JSON.stringify's own output.
  if (stringifiesCanonically(value, 0)) return JSON.stringify(value);
  return canonicalJsonByWriter(value);
}

/** The canonical form by the writer alone (exported for the tests that compare both paths). */
export function canonicalJsonByWriter(value: unknown): string {
  try {
    return write(value, 0);
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    // A too-deep path is itself unbounded: report where it started.
    const segments = error.code === 'canonical.too_deep' ? error.segments.slice(0, 8) : error.segments;
    throw new CanonicalizationError(error.code, error.message, pointer(segments));
  }
}

export function sha256Hex(input: string | Uint8Array): string {
  return createHash('sha256').update(input).digest('hex');
}

/** sha256, lowercase hex, of the canonical form's UTF-8 bytes. */
export function argumentsHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
