/**
 * The one scrubber (docs/adr/0018). § ToolExecutionContext, credentials: a resolved value never
 * enters a ToolResult; § Authentication: a server that echoes the credential back (server-
 * everything's get-env returns its whole environment) gets it replaced before the result leaves
 * the adapter. The executor (values a tool resolved) and the MCP adapter (values a connection
 * presented) both use this class, so a redaction reads the same wherever it happened.
 *
 * A secret is caught in every form a result can carry it:
 *  - raw, and JSON-escaped in any mix of escapes (`\"`, `\\`, `\/`, `\n`, `\u00e9` or `\u00E9`
 *    for any character, surrogate pairs for astral ones), and percent-encoded (UTF-8 bytes in
 *    either hex case, `+` for a space): one pattern in which each character matches any of its
 *    encodings, so mixed forms match too;
 *  - the same again over the canonical JSON-escaped form, which covers JSON inside JSON and a
 *    percent-encoded JSON string;
 *  - base64, standard and URL-safe, padded or not, of the value and of its percent- and
 *    form-encoded forms (encodeURIComponent, RFC 6749's `+` variant and the WHATWG form
 *    serializer: an HTTP Basic header carries form-encoded parts); inside a longer
 *    base64 string the characters that encode the secret depend on its byte offset modulo 3,
 *    so the stable inner run of each of the three alignments is matched.
 * Every occurrence of every form is found (left to right, each form's occurrences not overlapping
 * one another), overlapping spans of different forms or values are merged, and each merged span
 * becomes one REDACTED marker. Matching needs no regular expression, so a 64 KiB credential
 * file is handled like a short token, and its work per text is bounded (see Budget).
 */
export const REDACTED = '[redacted credential]';

/**
 * Values shorter than this are not redacted at all: three characters occur in ordinary text by
 * chance, and nothing that short is a secret worth the output it would destroy (ADR 0018).
 */
export const MIN_REDACTED_LENGTH = 4;

/**
 * Base64 forms only for values of at least this many UTF-8 bytes: the shortest stable run is
 * then 10 base64 characters (60 bits), so a chance match in unrelated base64 is negligible.
 */
export const MIN_BASE64_REDACTED_BYTES = 8;

const SHORT_JSON_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '/': '\\/',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

/** One way to write one character; `fold`: compared ignoring ASCII case (hex digits of an escape). */
interface Alternative {
  readonly text: string;
  readonly fold: boolean;
}

const isLoneSurrogate = (s: string): boolean => s.length === 1 && s.charCodeAt(0) >= 0xd800 && s.charCodeAt(0) <= 0xdfff;

/** Every encoding of one code point: raw, \uXXXX per code unit, the short JSON escape, percent-encoded UTF-8, '+' for a space. */
function characterAlternatives(char: string): Alternative[] {
  const alternatives: Alternative[] = [{ text: char, fold: false }];
  alternatives.push({
    text: [...Array(char.length).keys()].map((i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
    fold: true,
  });
  const short = SHORT_JSON_ESCAPES[char];
  if (short !== undefined) alternatives.push({ text: short, fold: false });
  if (!isLoneSurrogate(char)) {
    alternatives.push({
      text: [...Buffer.from(char, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join(''),
      fold: true,
    });
    if (char === ' ') alternatives.push({ text: '+', fold: false });
  }
  return alternatives;
}

const MAX_TRACKED_POSITIONS = 16;

/**
 * Matching work allowed per text: a fixed allowance plus a constant per character. Ordinary text
 * rejects a wrong start after a character or two and never comes near it; only a text built of
 * near-occurrences of a repetitive value (a run of one character against a value of that
 * character) does, and such a text is replaced whole: failing closed, never slow (ADR 0018).
 */
interface Budget {
  left: number;
}
const BUDGET_BASE = 1_000_000;
const BUDGET_PER_CHARACTER = 64;
const OVER_BUDGET = Symbol('over budget');

const matchesAt = (text: string, at: number, alternative: Alternative): boolean =>
  alternative.fold
    ? text.slice(at, at + alternative.text.length).toLowerCase() === alternative.text
    : text.startsWith(alternative.text, at);

/**
 * A value as a sequence of characters, each matching any of its encodings. Matched by hand, not
 * by a regular expression: a credential file may hold 64 KiB, and a pattern that long overflows
 * the regular-expression engine's stack.
 */
class TextPattern {
  readonly #characters: readonly Alternative[][];
  readonly #firstUnits: ReadonlySet<number>;

  constructor(value: string) {
    this.#characters = [...value].map(characterAlternatives);
    this.#firstUnits = new Set(
      this.#characters[0]!.flatMap((a) => (a.fold ? [a.text.charCodeAt(0), a.text.toUpperCase().charCodeAt(0)] : [a.text.charCodeAt(0)])),
    );
  }

  get key(): string {
    return this.#characters.map((alternatives) => alternatives[0]!.text).join('');
  }

  /** Non-overlapping occurrences, left to right, each as [start, end). */
  spans(text: string, into: [number, number][], budget: Budget): void {
    for (let at = 0; at < text.length; at++) {
      if (!this.#firstUnits.has(text.charCodeAt(at))) continue;
      const end = this.#endAt(text, at, budget);
      if (end !== -1) {
        into.push([at, end]);
        at = end - 1;
      }
    }
  }

  /** The furthest end of an occurrence starting at `start`, or -1: every way of writing each character is followed. */
  #endAt(text: string, start: number, budget: Budget): number {
    let positions = [start];
    for (const alternatives of this.#characters) {
      budget.left -= positions.length * alternatives.length;
      if (budget.left < 0) throw OVER_BUDGET;
      const next = new Set<number>();
      for (const at of positions)
        for (const alternative of alternatives) if (matchesAt(text, at, alternative)) next.add(at + alternative.text.length);
      if (next.size === 0) return -1;
      // Only a backslash has two ways that both fit a run of backslashes (`\` raw and `\\`
      // escaped), so the set grows only inside such runs; bounded, so a hostile text of
      // backslashes against a backslash-heavy value stays linear.
      positions = [...next].slice(0, MAX_TRACKED_POSITIONS);
    }
    return Math.max(...positions);
  }
}

function base64Forms(bytes: Buffer): string[] {
  const forms: string[] = [];
  const full = bytes.toString('base64');
  forms.push(full, full.replace(/=+$/, ''));
  // The run that encodes only the secret's bytes when it starts `offset` bytes into a group.
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    forms.push(encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6)));
  }
  return forms.flatMap((f) => [f, f.replace(/\+/g, '-').replace(/\//g, '_')]);
}

function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}

type Container = Record<string, unknown> | unknown[];

export class SecretRedactor {
  /** One entry per distinct value added; the raw value lives only inside the compiled patterns. */
  readonly #patterns: TextPattern[] = [];
  readonly #literals = new Set<string>();
  readonly #seen = new Set<string>();

  /** The number of distinct values this redactor catches. */
  get size(): number {
    return this.#seen.size;
  }

  /** Catch `value` from now on. Shorter than MIN_REDACTED_LENGTH: ignored (see above). */
  add(value: string): void {
    if (typeof value !== 'string' || value.length < MIN_REDACTED_LENGTH) return;
    if (this.#seen.has(value)) return;
    this.#seen.add(value);
    this.#patterns.push(new TextPattern(value));
    const escaped = JSON.stringify(value).slice(1, -1);
    if (escaped !== value) this.#patterns.push(new TextPattern(escaped));
    const sources = [value];
    if (![...value].some(isLoneSurrogate))
      sources.push(encodeURIComponent(value), formEncode(value), new URLSearchParams({ v: value }).toString().slice(2));
    for (const source of new Set(sources)) {
      const bytes = Buffer.from(source, 'utf8');
      if (bytes.length < MIN_BASE64_REDACTED_BYTES) continue;
      for (const form of base64Forms(bytes)) if (form.length > 0) this.#literals.add(form);
    }
  }

  /** Every form of every added value in `text`, replaced by REDACTED. */
  redactText(text: string): string {
    if (this.#patterns.length === 0 || text.length === 0) return text;
    const spans: [number, number][] = [];
    const budget: Budget = { left: BUDGET_BASE + BUDGET_PER_CHARACTER * text.length };
    try {
      for (const pattern of this.#patterns) pattern.spans(text, spans, budget);
    } catch (error) {
      if (error === OVER_BUDGET) return REDACTED;
      throw error;
    }
    for (const literal of this.#literals) {
      for (let at = text.indexOf(literal); at !== -1; at = text.indexOf(literal, at + literal.length))
        spans.push([at, at + literal.length]);
    }
    if (spans.length === 0) return text;
    spans.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    let out = '';
    let cursor = 0;
    let [start, end] = spans[0]!;
    for (const [s, e] of spans.slice(1)) {
      if (s < end) {
        end = Math.max(end, e);
        continue;
      }
      out += text.slice(cursor, start) + REDACTED;
      cursor = end;
      [start, end] = [s, e];
    }
    return out + text.slice(cursor, start) + REDACTED + text.slice(end);
  }

  /**
   * A copy of `value` with every string and every object key redacted. Iterative, so a result
   * nested deeper than the call stack cannot crash the caller; a key `__proto__` stays an own
   * property; a shared or cyclic object maps to one copy.
   */
  redact<T>(value: T): T {
    if (this.#patterns.length === 0) return value;
    if (typeof value === 'string') return this.redactText(value) as T;
    if (value === null || typeof value !== 'object') return value;
    const copies = new Map<object, Container>();
    const pending: [Container, Container][] = [];
    const copy = (v: unknown): unknown => {
      if (typeof v === 'string') return this.redactText(v);
      if (v === null || typeof v !== 'object') return v;
      const known = copies.get(v);
      if (known !== undefined) return known;
      const target: Container = Array.isArray(v) ? [] : {};
      copies.set(v, target);
      pending.push([v as Container, target]);
      return target;
    };
    const root = copy(value);
    while (pending.length > 0) {
      const [source, target] = pending.pop()!;
      if (Array.isArray(source)) {
        for (let i = 0; i < source.length; i++) (target as unknown[])[i] = copy(source[i]);
      } else {
        for (const [key, inner] of Object.entries(source)) {
          Object.defineProperty(target, this.redactText(key), { value: copy(inner), enumerable: true, writable: true, configurable: true });
        }
      }
    }
    return root as T;
  }
}
