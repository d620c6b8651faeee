import { createHash } from 'node:crypto';
import { CanonicalizationError } from './errors';

/**
 * Nesting beyond this is refused rather than recursed into, so an argument 10,000 levels
 * deep is a typed error and not a stack overflow. Far above any real tool schema (whose own
 * depth is capped at 16).
 */
export const CANONICAL_MAX_DEPTH = 128;

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

// A lone surrogate cannot be encoded as UTF-8, so it has no canonical form.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function pointer(path: readonly string[]): string {
  return path.length === 0 ? '' : '/' + path.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

function canonicalString(value: string, path: readonly string[]): string {
  if (LONE_SURROGATE.test(value)) {
    throw new CanonicalizationError('canonical.lone_surrogate', 'A string contains a lone UTF-16 surrogate.', pointer(path));
  }
  return JSON.stringify(value.normalize('NFC'));
}

function canonicalNumber(value: number, path: readonly string[]): string {
  if (Number.isNaN(value) || !Number.isFinite(value)) {
    throw new CanonicalizationError('canonical.non_finite_number', 'NaN and Infinity have no canonical form.', pointer(path));
  }
  if (Object.is(value, -0)) {
    throw new CanonicalizationError('canonical.negative_zero', '-0 has no canonical form.', pointer(path));
  }
  // Integers as integers, including those at or above 1e21 where String() switches to
  // exponent form; other numbers in ECMAScript's shortest round-trip form.
  if (Number.isInteger(value) && Math.abs(value) >= 1e21) return BigInt(value).toString();
  return String(value);
}

function write(value: unknown, path: string[], depth: number, out: string[]): void {
  if (depth > CANONICAL_MAX_DEPTH) {
    throw new CanonicalizationError('canonical.too_deep', `Nesting deeper than ${CANONICAL_MAX_DEPTH} levels.`, pointer(path.slice(0, 8)));
  }
  if (value === null) {
    out.push('null');
    return;
  }
  switch (typeof value) {
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'number':
      out.push(canonicalNumber(value, path));
      return;
    case 'string':
      out.push(canonicalString(value, path));
      return;
    case 'object':
      break;
    default:
      throw new CanonicalizationError('canonical.unsupported_type', `A ${typeof value} is not a JSON value.`, pointer(path));
  }
  if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(',');
      path.push(String(i));
      write(value[i], path, depth + 1, out);
      path.pop();
    }
    out.push(']');
    return;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    throw new CanonicalizationError('canonical.unsupported_type', 'Only plain objects are JSON objects.', pointer(path));
  }
  const entries = new Map<string, [string, unknown]>();
  for (const [rawKey, v] of Object.entries(value)) {
    if (v === undefined) {
      throw new CanonicalizationError('canonical.unsupported_type', 'undefined is not a JSON value.', pointer([...path, rawKey]));
    }
    if (LONE_SURROGATE.test(rawKey)) {
      throw new CanonicalizationError('canonical.lone_surrogate', 'A key contains a lone UTF-16 surrogate.', pointer(path));
    }
    const key = rawKey.normalize('NFC');
    if (entries.has(key)) {
      // Two keys that differ only in Unicode composition would silently overwrite one another.
      throw new CanonicalizationError('canonical.key_collision', 'Two keys are equal after NFC normalization.', pointer([...path, key]));
    }
    entries.set(key, [rawKey, v]);
  }
  const keys = [...entries.keys()].sort(compareCodePoints);
  out.push('{');
  keys.forEach((key, i) => {
    if (i > 0) out.push(',');
    out.push(JSON.stringify(key), ':');
    path.push(key);
    write(entries.get(key)![1], path, depth + 1, out);
    path.pop();
  });
  out.push('}');
}

/**
 * § Argument validation and the canonical form: keys sorted by code point, no whitespace,
 * strings NFC, integers as integers, shortest round-trip numbers; NaN, ±Infinity and -0
 * rejected with a CanonicalizationError.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  write(value, [], 0, out);
  return out.join('');
}

export function sha256Hex(input: string | Uint8Array): string {
  return createHash('sha256').update(input).digest('hex');
}

/** sha256, lowercase hex, of the canonical form's UTF-8 bytes. */
export function argumentsHash(value: unknown): string {
  return sha256Hex(Buffer.from(canonicalJson(value), 'utf8'));
}
