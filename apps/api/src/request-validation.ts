import type { z } from 'zod';
import { checkJsonText, checkJsonValue, describeJsonPath, quoteKey, STEP_BATCH_MAX_DEPTH, type JsonInputRefusal } from '@veetbot/domain';
import { ApiError } from './api-error';

/**
 * A zod failure as `request.invalid`: the path of the first issue and what was expected —
 * never the value that was sent (it may be a secret pasted in the wrong field, or megabytes).
 */
export function invalidRequest(where: 'body' | 'query', error: z.ZodError): ApiError {
  const issue = error.issues[0];
  if (issue === undefined) return new ApiError(400, 'request.invalid', `The request ${where} is invalid.`);
  // Paths may hold keys the caller chose (argument_trust): printed escaped, never verbatim.
  const path = describeJsonPath(issue.path.map((p) => (typeof p === 'number' ? p : String(p))));
  const at = path === '' ? where : `${where}.${path}`;
  return new ApiError(400, 'request.invalid', `Invalid request at ${at}: ${describeIssue(issue)}.`);
}

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${issue.expected}`;
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length === 1 ? '' : 's'} ${issue.keys.slice(0, 8).map(quoteKey).join(', ')}${issue.keys.length > 8 ? ', …' : ''}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    // An exclusive bound says so: `deadline_seconds: 0` against `.positive()` is "must be
    // greater than 0", not "minimum 0" (which 0 would satisfy).
    case 'too_small':
      return `must be ${issue.inclusive === false ? 'greater than' : 'at least'} ${String(issue.minimum)}${unitOf(issue.origin)}`;
    case 'too_big':
      return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${String(issue.maximum)}${unitOf(issue.origin)}`;
    case 'invalid_format':
      return `expected the ${issue.format} format`;
    case 'not_multiple_of':
      return `expected a multiple of ${String(issue.divisor)}`;
    case 'invalid_union':
      return 'matches none of the allowed shapes';
    case 'invalid_key':
      return 'has an invalid key';
    case 'invalid_element':
      return 'has an invalid element';
    default:
      return 'is invalid';
  }
}

function unitOf(origin: string): string {
  return origin === 'string' ? ' characters' : origin === 'array' ? ' items' : '';
}

/**
 * A refusal of the hostile-input checks (ADR 0019) as `request.invalid`, naming the field —
 * `Invalid request at body.calls.0.arguments.x: contains a NUL character (U+0000).` — and
 * never the value.
 */
export function invalidInput(where: 'body' | 'query', refusal: JsonInputRefusal): ApiError {
  const at = refusal.path.length === 0 ? where : `${where}.${describeJsonPath(refusal.path)}`;
  return new ApiError(400, 'request.invalid', `Invalid request at ${at}: ${refusal.message}.`);
}

/**
 * ADR 0019: a body may nest JSON_MAX_DEPTH levels below the deepest document it carries —
 * a step's `calls[i].arguments`, three levels down — so the api and the pipeline draw the
 * arguments' line at the same depth, and no body deeper than this is walked recursively.
 */
export const REQUEST_BODY_MAX_DEPTH = STEP_BATCH_MAX_DEPTH;

/** A body's text, and whether its bytes were UTF-8 (RFC 8259 § 8.1: JSON text is UTF-8). */
export interface DecodedBody {
  readonly text: string;
  readonly utf8: boolean;
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decode a body. Bytes that are not UTF-8 are not replaced by U+FFFD (that would store
 * something nobody sent) but kept as U+DC80–U+DCFF, one lone surrogate per bad byte (the
 * "surrogateescape" of PEP 383), so the body's checks refuse them at the field that holds them.
 */
export function decodeBody(bytes: Uint8Array): DecodedBody {
  try {
    return { text: STRICT_UTF8.decode(bytes), utf8: true };
  } catch {
    return { text: decodeEscapingBadBytes(bytes), utf8: false };
  }
}

/** Well-formed UTF-8 per Unicode Table 3-7; every other byte becomes U+DC00 + byte. */
function decodeEscapingBadBytes(bytes: Uint8Array): string {
  const units: number[] = [];
  let out = '';
  const flush = () => {
    out += String.fromCharCode(...units);
    units.length = 0;
  };
  const cont = (i: number, lo = 0x80, hi = 0xbf) => i < bytes.length && bytes[i]! >= lo && bytes[i]! <= hi;
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    let length = 0;
    if (b < 0x80) length = 1;
    else if (b >= 0xc2 && b <= 0xdf && cont(i + 1)) length = 2;
    else if (b === 0xe0 && cont(i + 1, 0xa0) && cont(i + 2)) length = 3;
    else if (((b >= 0xe1 && b <= 0xec) || b === 0xee || b === 0xef) && cont(i + 1) && cont(i + 2)) length = 3;
    else if (b === 0xed && cont(i + 1, 0x80, 0x9f) && cont(i + 2)) length = 3;
    else if (b === 0xf0 && cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3)) length = 4;
    else if (b >= 0xf1 && b <= 0xf3 && cont(i + 1) && cont(i + 2) && cont(i + 3)) length = 4;
    else if (b === 0xf4 && cont(i + 1, 0x80, 0x8f) && cont(i + 2) && cont(i + 3)) length = 4;
    if (length === 0) {
      units.push(0xdc00 + b);
      i += 1;
    } else {
      let cp = length === 1 ? b : b & (0xff >> (length + 1));
      for (let k = 1; k < length; k++) cp = (cp << 6) | (bytes[i + k]! & 0x3f);
      if (cp > 0xffff) units.push(0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff));
      else units.push(cp);
      i += length;
    }
    if (units.length >= 8192) flush();
  }
  flush();
  return out;
}

/**
 * A body that declares a media type must declare JSON (`application/json` or `…+json`, charset
 * UTF-8 if any); a body without Content-Type is read as JSON. 415 otherwise: the API never
 * guesses what a form or a UTF-16 text meant.
 */
export function requireJsonMediaType(contentType: string | undefined): void {
  if (contentType === undefined || contentType.trim() === '') return;
  const [type = '', ...parameters] = contentType.split(';');
  const mediaType = type.trim().toLowerCase();
  const charset = parameters.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('charset='));
  const charsetOk = charset === undefined || ['utf-8', '"utf-8"', 'utf8'].includes(charset.slice('charset='.length));
  if ((mediaType === 'application/json' || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(mediaType)) && charsetOk) return;
  throw new ApiError(415, 'request.unsupported_media_type', 'The request body must be JSON: send Content-Type: application/json (UTF-8).');
}

/**
 * Parse a JSON body; an empty body is treated as `{}` only where `emptyAllowed`. Then the
 * hostile-input checks (ADR 0019), before zod or anything else walks the value: nesting, NUL,
 * lone surrogates and bytes that are not UTF-8, `__proto__` keys, duplicate keys, and the numbers
 * that would not read back as sent (-0 is stored as 0, 1e400 overflows to Infinity, stored as null).
 */
export function parseJsonBody(body: DecodedBody, emptyAllowed: boolean): unknown {
  const { text, utf8 } = body;
  if (text.trim() === '') {
    if (emptyAllowed) return {};
    throw new ApiError(400, 'request.invalid_json', 'The request body is empty; send a JSON object.');
  }
  let value: unknown;
  try {
    // JSON.parse itself is iterative (any depth parses); nothing recursive runs before the checks.
    value = JSON.parse(text) as unknown;
  } catch {
    throw new ApiError(400, 'request.invalid_json', 'The request body is not valid JSON.');
  }
  const refused =
    checkJsonValue(value, { maxDepth: REQUEST_BODY_MAX_DEPTH, canonicalNumbers: true }) ?? checkJsonText(text, { rawSurrogates: !utf8 });
  if (refused !== null) throw invalidInput('body', refused);
  // Bytes that are not UTF-8 outside any string already failed JSON.parse; inside one, the
  // text check found them. This line is the backstop.
  if (!utf8) throw new ApiError(400, 'request.invalid_json', 'The request body is not UTF-8.');
  return value;
}
