import { z } from 'zod';
import { canonicalJson, compareCodePoints, sha256Hex } from './canonical-json';
import { isValidToolName } from './tool-name';

/**
 * A call the pipeline refuses before step 5 (unknown tool, not enabled, scope, invalid
 * arguments) has no normalized arguments hash. It is still a fact of the run, and the breaker
 * must tell one such call from another (§ The circuit breakers: the identical-call row counts
 * "calls with the same name and arguments"): five different invalid argument sets are five
 * different calls, not one call repeated five times. So the row keeps what was received —
 * bounded, and marked as never validated — and its hash is taken over the raw tool name and
 * the received arguments (docs/adr/0020).
 */

/** The key that marks a stored arguments document as the unvalidated record of a refused call. */
export const UNVALIDATED_ARGUMENTS_KEY = '$unvalidated';
/** Hash tag: a change of derivation is a new tag, never a collision with the normalized hashes. */
export const UNVALIDATED_HASH_TAG = 'veetbot.arguments.unvalidated.v1';
/** A malformed tool name is kept for the audit trail up to this many UTF-8 bytes. */
export const UNVALIDATED_TOOL_NAME_MAXIMUM_BYTES = 1024;
const TRUNCATION_MARKER = '…[truncated]';

export const UnvalidatedArguments = z
  .object({
    [UNVALIDATED_ARGUMENTS_KEY]: z
      .object({
        /** The arguments as received, when they fit the bound and are storable JSON; else null. */
        received: z.unknown(),
        /** Otherwise their JSON text, cut at the bound (a UTF-8 boundary) and marked. */
        excerpt: z.string().nullable(),
        /** UTF-8 bytes of the received arguments' JSON text. */
        received_bytes: z.number().int().nonnegative(),
        truncated: z.boolean(),
        /** The requested name when it is not a registry name (the row's tool_name is then a placeholder). */
        tool_name: z.string().nullable(),
      })
      .strict(),
  })
  .strict();
export type UnvalidatedArguments = z.infer<typeof UnvalidatedArguments>;

export function isUnvalidatedArguments(value: unknown): value is UnvalidatedArguments {
  return UnvalidatedArguments.safeParse(value).success;
}

export interface UnvalidatedRecord {
  /** The breaker's and the idempotency key's arguments hash for this call. */
  readonly argumentsHash: string;
  /** What the row's `arguments` column stores. */
  readonly stored: UnvalidatedArguments;
}

/**
 * The record of a call refused before validation. The hash covers the raw name (a JSON
 * string: self-delimiting) and the canonical form of the arguments where they have one — so
 * NFC-equal arguments count as the same call, as they would after step 5 — and otherwise a
 * total, key-sorted, depth-safe text form (`receivedText`), tagged apart. `maximumBytes`
 * bounds what is stored (the pipeline's argument byte limit); the hash always covers all of it.
 */
export function unvalidatedRecord(rawToolName: string, received: unknown, maximumBytes: number): UnvalidatedRecord {
  let canonical: string | null;
  try {
    canonical = canonicalJson(received ?? null);
  } catch {
    // CanonicalizationError (lone surrogate, -0, too deep, a key collision under NFC) or a
    // value JSON cannot carry: the fallback form below.
    canonical = null;
  }
  const text = canonical ?? receivedText(received);
  const form = canonical === null ? `~${text}` : `=${canonical}`;
  const argumentsHash = sha256Hex(`${UNVALIDATED_HASH_TAG}\0${JSON.stringify(rawToolName)}\0${form}`);

  const bytes = Buffer.byteLength(text, 'utf8');
  // PostgreSQL's jsonb refuses \u0000 (and lone surrogates, which canonical refused already):
  // such a document is kept as text, never as structure.
  const storable = canonical !== null && bytes <= maximumBytes && !canonical.includes('\\u0000');
  const truncated = bytes > maximumBytes;
  return {
    argumentsHash,
    stored: {
      [UNVALIDATED_ARGUMENTS_KEY]: {
        received: storable ? (received ?? null) : null,
        excerpt: storable ? null : truncated ? cutUtf8(text, maximumBytes) + TRUNCATION_MARKER : text,
        received_bytes: bytes,
        truncated,
        tool_name: isValidToolName(rawToolName) ? null : boundedName(rawToolName),
      },
    },
  };
}

function boundedName(name: string): string {
  // JSON.stringify escapes NUL and lone surrogates, so the kept text is always storable.
  const text = JSON.stringify(name).slice(1, -1);
  return Buffer.byteLength(text, 'utf8') <= UNVALIDATED_TOOL_NAME_MAXIMUM_BYTES
    ? text
    : cutUtf8(text, UNVALIDATED_TOOL_NAME_MAXIMUM_BYTES) + TRUNCATION_MARKER;
}

/** The longest prefix of `text` within `maximumBytes` UTF-8 bytes, never splitting a character. */
function cutUtf8(text: string, maximumBytes: number): string {
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char, 'utf8');
    if (bytes + size > maximumBytes) break;
    bytes += size;
    end += char.length;
  }
  return text.slice(0, end);
}

/**
 * A deterministic text form of ANY value, for the values canonical JSON refuses: keys sorted by
 * code point (a document read back from jsonb has its keys reordered, and a resubmitted step
 * must derive the same hash), strings as JSON.stringify writes them (lone surrogates and NUL
 * escaped), -0 and non-finite numbers spelled out, anything JSON cannot carry as its type name.
 * Iterative, so no nesting depth overflows the stack.
 */
export function receivedText(value: unknown): string {
  const out: string[] = [];
  // Work items: a value to write, or literal text (separators and closers).
  const stack: ({ readonly value: unknown } | string)[] = [{ value }];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    const v = item.value;
    switch (typeof v) {
      case 'string':
        out.push(JSON.stringify(v));
        continue;
      case 'number':
        out.push(Object.is(v, -0) ? '-0' : String(v));
        continue;
      case 'boolean':
        out.push(String(v));
        continue;
      case 'object':
        break;
      default:
        out.push(`"<${typeof v}>"`);
        continue;
    }
    if (v === null) {
      out.push('null');
      continue;
    }
    if (seen.has(v)) {
      out.push('"<repeated>"');
      continue;
    }
    seen.add(v);
    const entries: (string | { readonly value: unknown })[] = [];
    if (Array.isArray(v)) {
      out.push('[');
      v.forEach((element, i) => {
        if (i > 0) entries.push(',');
        entries.push({ value: element });
      });
      entries.push(']');
    } else {
      out.push('{');
      const record = v as Record<string, unknown>;
      Object.keys(record)
        .sort(compareCodePoints)
        .forEach((key, i) => {
          if (i > 0) entries.push(',');
          entries.push(`${JSON.stringify(key)}:`, { value: record[key] });
        });
      entries.push('}');
    }
    // Reversed onto the stack so they are written in order.
    for (let i = entries.length - 1; i >= 0; i--) stack.push(entries[i]!);
  }
  return out.join('');
}
