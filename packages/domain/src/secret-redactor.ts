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
 *  - HTML character references, mixed freely with the forms above: decimal `&#115;` and hex
 *    `&#x73;` (either case, leading zeros, the `;` optional as HTML decodes it) for any
 *    character, and the named references of ASCII punctuation (`&amp;`, `&lt;`, `&quot;`,
 *    `&apos;`, `&sol;`, … ; the legacy five also without `;`) (docs/adr/0053);
 *  - hex of the value's UTF-8 bytes, in either case (any mix), plain or as `\xHH` escapes;
 *  - base64, standard and URL-safe, padded or not, of the value and of its percent- and
 *    form-encoded forms (encodeURIComponent, RFC 6749's `+` variant and the WHATWG form
 *    serializer: an HTTP Basic header carries form-encoded parts); inside a longer
 *    base64 string the characters that encode the secret depend on its byte offset modulo 3,
 *    so the stable inner run of each of the three alignments is matched.
 * `redactAcross` does the same over several texts read as one (a result's text items), so a
 * secret split between two items is caught in both halves.
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

/**
 * HTML's named character references for ASCII punctuation and the no-break space (the WHATWG
 * list; names are case-sensitive, so the upper-case spellings HTML also accepts are listed).
 * The legacy references HTML decodes without a `;` are in LEGACY_NAMED.
 */
const NAMED_ENTITIES: Readonly<Record<string, readonly string[]>> = {
  '\t': ['Tab'],
  '\n': ['NewLine'],
  '!': ['excl'],
  '"': ['quot', 'QUOT'],
  '#': ['num'],
  $: ['dollar'],
  '%': ['percnt'],
  '&': ['amp', 'AMP'],
  "'": ['apos'],
  '(': ['lpar'],
  ')': ['rpar'],
  '*': ['ast', 'midast'],
  '+': ['plus'],
  ',': ['comma'],
  '.': ['period'],
  '/': ['sol'],
  ':': ['colon'],
  ';': ['semi'],
  '<': ['lt', 'LT'],
  '=': ['equals'],
  '>': ['gt', 'GT'],
  '?': ['quest'],
  '@': ['commat'],
  '[': ['lsqb', 'lbrack'],
  '\\': ['bsol'],
  ']': ['rsqb', 'rbrack'],
  '^': ['Hat'],
  _: ['lowbar', 'UnderBar'],
  '`': ['grave', 'DiacriticalGrave'],
  '{': ['lcub', 'lbrace'],
  '|': ['verbar', 'vert', 'VerticalLine'],
  '}': ['rcub', 'rbrace'],
  '\u00a0': ['nbsp', 'NonBreakingSpace'],
};
const LEGACY_NAMED: ReadonlySet<string> = new Set(['quot', 'QUOT', 'amp', 'AMP', 'lt', 'LT', 'gt', 'GT', 'nbsp']);

const isDigit = (unit: number): boolean => unit >= 48 && unit <= 57;
const isHexDigit = (unit: number): boolean => isDigit(unit) || (unit >= 97 && unit <= 102) || (unit >= 65 && unit <= 70);
/** Digits of a numeric character reference read at most (leading zeros included): bounded work per position. */
const MAX_REFERENCE_DIGITS = 16;

/**
 * The end of an HTML numeric character reference for `codePoint` at `at` (`&#115;`, `&#x73;`,
 * `&#X0073`, the `;` optional as HTML's decoder has it), or -1.
 */
function numericReferenceEnd(text: string, at: number, codePoint: number): number {
  if (text.charCodeAt(at) !== 38 || text.charCodeAt(at + 1) !== 35) return -1; // '&#'
  let i = at + 2;
  const hex = text.charCodeAt(i) === 120 || text.charCodeAt(i) === 88; // x or X
  if (hex) i++;
  const start = i;
  let value = 0;
  while (i < text.length && i - start < MAX_REFERENCE_DIGITS && (hex ? isHexDigit : isDigit)(text.charCodeAt(i))) {
    value = value * (hex ? 16 : 10) + parseInt(text[i]!, 16);
    i++;
  }
  if (i === start || value !== codePoint) return -1;
  return text.charCodeAt(i) === 59 ? i + 1 : i; // ';'
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
  for (const name of NAMED_ENTITIES[char] ?? []) {
    alternatives.push({ text: `&${name};`, fold: false });
    if (LEGACY_NAMED.has(name)) alternatives.push({ text: `&${name}`, fold: false });
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
  /** Each character's code point, for its HTML numeric character reference. */
  readonly #codePoints: readonly number[];
  readonly #firstUnits: ReadonlySet<number>;

  constructor(value: string) {
    const characters = [...value];
    this.#characters = characters.map(characterAlternatives);
    this.#codePoints = characters.map((c) => c.codePointAt(0)!);
    this.#firstUnits = new Set([
      ...this.#characters[0]!.flatMap((a) =>
        a.fold ? [a.text.charCodeAt(0), a.text.toUpperCase().charCodeAt(0)] : [a.text.charCodeAt(0)],
      ),
      38, // '&': a numeric character reference
    ]);
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
    for (const [index, alternatives] of this.#characters.entries()) {
      budget.left -= positions.length * (alternatives.length + 1);
      if (budget.left < 0) throw OVER_BUDGET;
      const next = new Set<number>();
      for (const at of positions) {
        for (const alternative of alternatives) if (matchesAt(text, at, alternative)) next.add(at + alternative.text.length);
        const reference = numericReferenceEnd(text, at, this.#codePoints[index]!);
        if (reference !== -1) next.add(reference);
      }
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

/** `text` with each of `spans` (sorted, disjoint) replaced by REDACTED. */
function replaceSpans(text: string, spans: readonly (readonly [number, number])[]): string {
  let out = '';
  let cursor = 0;
  for (const [start, end] of spans) {
    out += text.slice(cursor, start) + REDACTED;
    cursor = end;
  }
  return out + text.slice(cursor);
}

export class SecretRedactor {
  /** One entry per distinct value added; the raw value lives only inside the compiled patterns. */
  readonly #patterns: TextPattern[] = [];
  readonly #literals = new Set<string>();
  /** Lower-case literals matched against the text with ASCII letters lower-cased (hex in either case). */
  readonly #foldedLiterals = new Set<string>();
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
    if (![...value].some(isLoneSurrogate)) {
      // Hex of the UTF-8 bytes (a hex dump, a `bytes.hex()`, `0x…`), and as `\xHH` escapes
      // (a Python bytes repr, a C string): any case. At least 8 hex digits (4 characters).
      const hex = Buffer.from(value, 'utf8').toString('hex');
      this.#foldedLiterals.add(hex);
      this.#foldedLiterals.add(hex.replace(/../g, '\\x$&'));
    }
  }

  /**
   * Every occurrence of every form in `text`, merged, left to right; null when the work would
   * exceed the budget (the caller replaces the whole text: failing closed).
   */
  #spans(text: string): [number, number][] | null {
    const spans: [number, number][] = [];
    const budget: Budget = { left: BUDGET_BASE + BUDGET_PER_CHARACTER * text.length };
    try {
      for (const pattern of this.#patterns) pattern.spans(text, spans, budget);
    } catch (error) {
      if (error === OVER_BUDGET) return null;
      throw error;
    }
    const literalSpans = (haystack: string, literal: string) => {
      for (let at = haystack.indexOf(literal); at !== -1; at = haystack.indexOf(literal, at + literal.length))
        spans.push([at, at + literal.length]);
    };
    for (const literal of this.#literals) literalSpans(text, literal);
    if (this.#foldedLiterals.size > 0) {
      // ASCII letters only, so every index stays where it was (toLowerCase may change lengths).
      const folded = text.replace(/[A-Z]+/g, (run) => run.toLowerCase());
      for (const literal of this.#foldedLiterals) literalSpans(folded, literal);
    }
    if (spans.length === 0) return spans;
    spans.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    const merged: [number, number][] = [[...spans[0]!]];
    for (const [s, e] of spans.slice(1)) {
      const last = merged[merged.length - 1]!;
      if (s < last[1]) last[1] = Math.max(last[1], e);
      else merged.push([s, e]);
    }
    return merged;
  }

  /** Every form of every added value in `text`, replaced by REDACTED. */
  redactText(text: string): string {
    if (this.#patterns.length === 0 || text.length === 0) return text;
    const spans = this.#spans(text);
    if (spans === null) return REDACTED;
    return replaceSpans(text, spans);
  }

  /**
   * Several texts read as one (a result's text items, in order): a secret split between them —
   * its first half ending one item, the rest starting the next — is found in their
   * concatenation, and each item loses its piece of it (each piece becomes one REDACTED). A
   * secret inside one item is caught as redactText would. Over budget: every text is replaced.
   */
  redactAcross(texts: readonly string[]): string[] {
    if (this.#patterns.length === 0 || texts.length === 0) return [...texts];
    const joined = texts.join('');
    const spans = this.#spans(joined);
    if (spans === null) return texts.map(() => REDACTED);
    let offset = 0;
    return texts.map((text) => {
      const from = offset;
      const to = offset + text.length;
      offset = to;
      const local = spans
        .filter(([s, e]) => s < to && e > from)
        .map(([s, e]): [number, number] => [Math.max(s, from) - from, Math.min(e, to) - from]);
      return local.length === 0 ? text : replaceSpans(text, local);
    });
  }

  /**
   * A tool result (an MCP tools/call result, a ToolResult): redact, and then redactAcross over
   * its `content` items of type text, in order — a secret whose halves are in two items is
   * caught (docs/adr/0053). Anything else in the result is redacted as `redact` does.
   */
  redactResult<T>(value: T): T {
    const result = this.redact(value);
    if (typeof result !== 'object' || result === null || !Array.isArray((result as { content?: unknown }).content)) return result;
    const content = (result as unknown as { content: unknown[] }).content;
    const at: number[] = [];
    const texts: string[] = [];
    content.forEach((item, i) => {
      if (typeof item === 'object' && item !== null && (item as { type?: unknown }).type === 'text') {
        const text = (item as { text?: unknown }).text;
        if (typeof text === 'string') {
          at.push(i);
          texts.push(text);
        }
      }
    });
    if (texts.length < 2) return result;
    const redacted = this.redactAcross(texts);
    if (redacted.every((text, i) => text === texts[i])) return result;
    const copy = [...content];
    at.forEach((index, i) => {
      copy[index] = { ...(content[index] as object), text: redacted[i] };
    });
    return { ...(result as object), content: copy } as T;
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
