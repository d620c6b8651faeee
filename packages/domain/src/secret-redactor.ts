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
 * Every occurrence of every form is found (overlapping ones too), the spans are merged, and each
 * merged span becomes one REDACTED marker.
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

const SHORT_JSON_ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\\\', '/': '/', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't' };

/** A code unit as a regex atom that matches only itself (no `u` flag: lone surrogates are fine). */
const unit = (code: number): string => `\\u${code.toString(16).padStart(4, '0')}`;

/** Hex digits in either case: `e9` matches `e9`, `E9`, `e9`. */
const hex = (value: number, width: number): string =>
  [...value.toString(16).padStart(width, '0')].map((d) => (/[0-9]/.test(d) ? d : `[${d}${d.toUpperCase()}]`)).join('');

const isLoneSurrogate = (s: string): boolean => s.length === 1 && s.charCodeAt(0) >= 0xd800 && s.charCodeAt(0) <= 0xdfff;

/** Every encoding of one code point, as a regex alternation. */
function characterPattern(char: string): string {
  const alternatives: string[] = [[...Array(char.length).keys()].map((i) => unit(char.charCodeAt(i))).join('')];
  // JSON: any code unit as \uXXXX (either hex case), the short escapes where JSON has one.
  alternatives.push([...Array(char.length).keys()].map((i) => `\\\\u${hex(char.charCodeAt(i), 4)}`).join(''));
  const short = SHORT_JSON_ESCAPES[char];
  if (short !== undefined) alternatives.push(`\\\\${short}`);
  // Percent-encoding of the UTF-8 bytes; form encoding writes a space as '+'.
  if (!isLoneSurrogate(char)) {
    alternatives.push([...Buffer.from(char, 'utf8')].map((byte) => `%${hex(byte, 2)}`).join(''));
    if (char === ' ') alternatives.push('\\+');
  }
  return `(?:${alternatives.join('|')})`;
}

function textPattern(value: string): RegExp {
  return new RegExp([...value].map(characterPattern).join(''), 'g');
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
  readonly #patterns: RegExp[] = [];
  readonly #literals = new Set<string>();
  readonly #seen = new Set<RegExp['source']>();

  /** The number of distinct values this redactor catches. */
  get size(): number {
    return this.#seen.size;
  }

  /** Catch `value` from now on. Shorter than MIN_REDACTED_LENGTH: ignored (see above). */
  add(value: string): void {
    if (typeof value !== 'string' || value.length < MIN_REDACTED_LENGTH) return;
    const pattern = textPattern(value);
    if (this.#seen.has(pattern.source)) return;
    this.#seen.add(pattern.source);
    this.#patterns.push(pattern);
    const escaped = JSON.stringify(value).slice(1, -1);
    if (escaped !== value) this.#patterns.push(textPattern(escaped));
    const sources = [value];
    if (![...value].some(isLoneSurrogate)) sources.push(encodeURIComponent(value), formEncode(value), new URLSearchParams({ v: value }).toString().slice(2));
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
    for (const pattern of this.#patterns) {
      pattern.lastIndex = 0;
      for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
        spans.push([m.index, m.index + m[0].length]);
        // Overlapping occurrences too: "aaaaaa" holds "aaaa" at 0, 1 and 2.
        pattern.lastIndex = m.index + 1;
      }
    }
    for (const literal of this.#literals) {
      for (let at = text.indexOf(literal); at !== -1; at = text.indexOf(literal, at + 1)) spans.push([at, at + literal.length]);
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
