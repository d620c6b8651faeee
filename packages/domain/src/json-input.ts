/**
 * The checks every JSON document from outside passes before anything walks it recursively,
 * stores it or hashes it (ADR 0019, extending ADR 0004). Both walks here are iterative with an
 * explicit stack, so a document 10,000 levels deep is a refusal and never a stack overflow.
 *
 * - **Nesting**: a value may sit inside at most JSON_MAX_DEPTH containers. One limit for the
 *   whole system: the canonical form (§ Argument validation) refuses the same depth.
 * - **NUL (U+0000)**: PostgreSQL text and jsonb cannot hold it, and the idempotency key joins
 *   its inputs with NUL (§ Idempotency: the key), so a NUL inside an identifier could forge a
 *   collision.
 * - **Lone UTF-16 surrogates**: they have no UTF-8 form — jsonb refuses them, the canonical form
 *   refuses them, and a driver that quietly writes U+FFFD instead stores something nobody sent.
 * - **`__proto__` as a key**: JSON.parse makes it an own property, but any later
 *   `Object.assign` or `obj[key] = …` copy turns it into the copy's prototype.
 * - **Duplicate keys** (text only: a parsed value cannot hold them): JSON.parse keeps the last,
 *   another reader may keep the first; the document must mean one thing (RFC 7493, I-JSON).
 * - **NaN, ±Infinity, -0** (optional): stored as JSON they read back as `null` and `0`, so a
 *   document stored before it is judged (a step's batch) would be judged on something else.
 */

/** ADR 0019: the one nesting limit (ADR 0004's 128, now enforced before any recursive walk). */
export const JSON_MAX_DEPTH = 128;

/**
 * A step carries each call's arguments three levels down (`calls[i].arguments`), in the api's
 * request body and in the stored batch alike: either may nest this deep, so the arguments get
 * the whole JSON_MAX_DEPTH wherever the call comes from.
 */
export const STEP_BATCH_MAX_DEPTH = JSON_MAX_DEPTH + 3;

/**
 * Values a runtime-built document may hold before the walk stops: more than a 1 MiB document
 * (ADR 0004's argument ceiling) can spell, so only a shared-reference graph built in code,
 * which could be exponential to walk, ever meets it.
 */
export const JSON_MAX_VALUES = 1024 * 1024;

/** A surrogate without its partner: no Unicode scalar value, so no UTF-8 form. */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const ANY_SURROGATE = /[\uD800-\uDFFF]/;

export type JsonInputProblem =
  | 'nul_character'
  | 'lone_surrogate'
  | 'too_deep'
  | 'reserved_key'
  | 'duplicate_key'
  | 'not_json'
  | 'too_many_values'
  | 'non_finite_number'
  | 'negative_zero';

export interface JsonInputRefusal {
  readonly code: `json.${JsonInputProblem}`;
  /**
   * Where, from the document's root: object keys and array indexes. For a refused key, the
   * path of the object holding it (the key itself may hold the offending character).
   */
  readonly path: readonly (string | number)[];
  readonly inKey: boolean;
  /** A fixed description of the problem; never the value. */
  readonly message: string;
}

const MESSAGES: Readonly<Record<JsonInputProblem, { readonly value: string; readonly key: string }>> = {
  nul_character: { value: 'contains a NUL character (U+0000)', key: 'has a key that contains a NUL character (U+0000)' },
  lone_surrogate: {
    value: 'is not valid Unicode (a lone UTF-16 surrogate, or bytes that are not UTF-8)',
    key: 'has a key that is not valid Unicode (a lone UTF-16 surrogate, or bytes that are not UTF-8)',
  },
  // The limit itself is filled in by refusal(): a caller may check against its own.
  too_deep: { value: 'nests deeper than {limit} levels', key: 'nests deeper than {limit} levels' },
  reserved_key: { value: 'has the key "__proto__", which is not accepted', key: 'has the key "__proto__", which is not accepted' },
  duplicate_key: { value: 'appears more than once in its object', key: 'has a key that appears more than once' },
  not_json: { value: 'is not a JSON value', key: 'is not a JSON value' },
  too_many_values: { value: `holds more than ${JSON_MAX_VALUES} values`, key: `holds more than ${JSON_MAX_VALUES} values` },
  non_finite_number: {
    value: 'is a number outside the range of a double (or NaN)',
    key: 'is a number outside the range of a double (or NaN)',
  },
  negative_zero: { value: 'is -0, which has no canonical form', key: 'is -0, which has no canonical form' },
};

function refusal(problem: JsonInputProblem, path: readonly (string | number)[], inKey: boolean, limit = JSON_MAX_DEPTH): JsonInputRefusal {
  const message = (inKey ? MESSAGES[problem].key : MESSAGES[problem].value).replace('{limit}', String(limit));
  return { code: `json.${problem}`, path, inKey, message };
}

/** What is wrong with one string (a key or a value), if anything. */
export function stringProblem(value: string): 'nul_character' | 'lone_surrogate' | null {
  if (value.includes('\u0000')) return 'nul_character';
  if (ANY_SURROGATE.test(value) && LONE_SURROGATE.test(value)) return 'lone_surrogate';
  return null;
}

function keyProblem(key: string): JsonInputProblem | null {
  return key === '__proto__' ? 'reserved_key' : stringProblem(key);
}

interface ValueFrame {
  readonly container: Record<string, unknown> | readonly unknown[];
  /** null for an array. */
  readonly keys: readonly string[] | null;
  next: number;
  /** The segment of the child being visited (its path is every frame's `at`). */
  at: string | number;
}

/**
 * The first thing about a parsed (or built) value that makes it unsafe to walk, store or hash
 * — nesting, NUL, lone surrogates, `__proto__` keys, non-JSON values (undefined, functions,
 * class instances), too many values — and, with `canonicalNumbers`, NaN, ±Infinity and -0 —
 * or null. Iterative: a value of any depth is checked in constant stack.
 */
export function checkJsonValue(
  root: unknown,
  options: {
    readonly maxDepth?: number;
    readonly maxValues?: number;
    /** Treat `undefined` as absent, as a JSON writer does (a built object's unset optional field). */
    readonly undefinedIsAbsent?: boolean;
    /**
     * Refuse the numbers the canonical form refuses (§ Argument validation: NaN, ±Infinity,
     * -0). Stored as JSON they would come back as something else (`null`, `0`): a document
     * that is stored before it is judged must be judged on what will be read back.
     */
    readonly canonicalNumbers?: boolean;
  } = {},
): JsonInputRefusal | null {
  const maxDepth = options.maxDepth ?? JSON_MAX_DEPTH;
  const maxValues = options.maxValues ?? JSON_MAX_VALUES;
  const frames: ValueFrame[] = [];
  const path = (): (string | number)[] => frames.map((f) => f.at);
  let seen = 0;

  // Check one value at the current path; a container becomes a frame whose children follow.
  const visit = (value: unknown): JsonInputRefusal | null => {
    if (++seen > maxValues) return refusal('too_many_values', path(), false);
    // The canonical form's rule exactly: a value inside more than maxDepth containers.
    if (frames.length > maxDepth) return refusal('too_deep', path(), false, maxDepth);
    if (typeof value === 'number') {
      if (options.canonicalNumbers !== true) return null;
      if (!Number.isFinite(value)) return refusal('non_finite_number', path(), false);
      return Object.is(value, -0) ? refusal('negative_zero', path(), false) : null;
    }
    if (value === null || typeof value === 'boolean') return null;
    if (value === undefined && options.undefinedIsAbsent === true) return null;
    if (typeof value === 'string') {
      const problem = stringProblem(value);
      return problem === null ? null : refusal(problem, path(), false);
    }
    if (typeof value !== 'object') return refusal('not_json', path(), false);
    if (Array.isArray(value)) {
      frames.push({ container: value, keys: null, next: 0, at: 0 });
      return null;
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return refusal('not_json', path(), false);
    const keys = Object.keys(value);
    for (const key of keys) {
      const problem = keyProblem(key);
      if (problem !== null) return refusal(problem, path(), true);
    }
    frames.push({ container: value as Record<string, unknown>, keys, next: 0, at: '' });
    return null;
  };

  const first = visit(root);
  if (first !== null) return first;
  while (frames.length > 0) {
    const top = frames[frames.length - 1]!;
    const size = top.keys === null ? (top.container as readonly unknown[]).length : top.keys.length;
    if (top.next >= size) {
      frames.pop();
      continue;
    }
    const i = top.next++;
    let child: unknown;
    if (top.keys === null) {
      top.at = i;
      child = (top.container as readonly unknown[])[i];
    } else {
      const key = top.keys[i]!;
      top.at = key;
      child = (top.container as Record<string, unknown>)[key];
    }
    const found = visit(child);
    if (found !== null) return found;
  }
  return null;
}

interface TextFrame {
  /** null for an array. */
  readonly keys: Set<string> | null;
  /** The current key, or the current index. */
  at: string | number;
  /** Inside an object: the next string token is a key. */
  expectKey: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * What only the text of a JSON document shows — a key that appears twice in one object, and
 * (with `rawSurrogates`) a raw lone surrogate inside a string, which is how a body decoder
 * that maps bytes that are not UTF-8 to U+DC80–U+DCFF marks them — or null.
 *
 * Precondition: `text` is valid JSON (JSON.parse accepted it) and its value passed
 * checkJsonValue, so its nesting is bounded. Iterative, one pass.
 */
export function checkJsonText(text: string, options: { readonly rawSurrogates?: boolean } = {}): JsonInputRefusal | null {
  const frames: TextFrame[] = [];
  const path = (): (string | number)[] => frames.map((f) => f.at);
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // A string token: find its closing quote, stepping over escapes.
      let j = i + 1;
      let escaped = false;
      for (;;) {
        // Unterminated: not JSON, so outside the precondition; never loop past the end.
        if (j >= n) return null;
        const d = text.charCodeAt(j);
        if (d === QUOTE) break;
        if (d === BACKSLASH) {
          escaped = true;
          j += 2;
        } else j += 1;
      }
      const raw = text.slice(i + 1, j);
      const top = frames[frames.length - 1];
      const isKey = top !== undefined && top.keys !== null && top.expectKey;
      if (options.rawSurrogates === true && ANY_SURROGATE.test(raw) && LONE_SURROGATE.test(raw)) {
        return refusal('lone_surrogate', path().slice(0, isKey ? -1 : undefined), isKey);
      }
      if (isKey) {
        const key = escaped ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (top.keys!.has(key)) {
          top.at = key;
          return refusal('duplicate_key', path(), false);
        }
        top.keys!.add(key);
        top.at = key;
        top.expectKey = false;
      }
      i = j + 1;
      continue;
    }
    switch (c) {
      case 0x7b: // {
        frames.push({ keys: new Set(), at: '', expectKey: true });
        break;
      case 0x5b: // [
        frames.push({ keys: null, at: 0, expectKey: false });
        break;
      case 0x7d: // }
      case 0x5d: // ]
        frames.pop();
        break;
      case 0x2c: {
        // ,
        const top = frames[frames.length - 1]!;
        if (top.keys === null) top.at = (top.at as number) + 1;
        else top.expectKey = true;
        break;
      }
      default:
        break;
    }
    i += 1;
  }
  return null;
}

/**
 * A path for people: `calls.0.arguments.x`. Keys that are not plain words are quoted with
 * every non-printable or non-ASCII character escaped, long keys are cut, and a deep path
 * shows its first levels: the text goes into error messages and logs, never a hostile key.
 */
export function describeJsonPath(path: readonly (string | number)[], options: { readonly maxSegments?: number } = {}): string {
  const maxSegments = options.maxSegments ?? 12;
  const shown = path
    .slice(0, maxSegments)
    .map((segment) => (typeof segment === 'number' || /^[A-Za-z0-9_$@-]{1,64}$/.test(segment) ? String(segment) : quoteKey(segment)));
  if (path.length > maxSegments) shown.push('…');
  return shown.join('.');
}

/** A key for a message: quoted, every non-printable or non-ASCII character escaped, cut at 64. */
export function quoteKey(key: string): string {
  const quoted = JSON.stringify(key.slice(0, 64)).replace(/[^\x20-\x7e]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return key.length > 64 ? `${quoted}…` : quoted;
}
