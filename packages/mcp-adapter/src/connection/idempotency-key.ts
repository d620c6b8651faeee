import { NotDispatchedError } from '../errors';

/*
 * § Idempotency: "For a conditionally idempotent tool that calls an external service supporting
 * idempotency keys, … passing the application key through. It is passed verbatim — the same
 * 64-character hex string." The key's wire form on MCP (docs/adr/0066): in tools/call
 * `params._meta` under IDEMPOTENCY_KEY_META, and on HTTP transports as the `Idempotency-Key`
 * header of that call's own POST (never on the handshake, a listing or the standing GET).
 */

/**
 * The `_meta` name. MCP's key rules: an optional prefix of dot-separated labels and a slash; from
 * 2025-11-25 implementations SHOULD use reverse DNS, and a prefix whose second label is `mcp` or
 * `modelcontextprotocol` is reserved. `io.veetbot/` is ours and not reserved.
 */
export const IDEMPOTENCY_KEY_META = 'io.veetbot/idempotency_key';

/** The HTTP header (the IETF httpapi draft's name; the value is the bare key, no quotes). */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** § Idempotency: sha256 as 64 lowercase hex characters. Anything else is never put on the wire. */
export const IDEMPOTENCY_KEY_PATTERN = /^[0-9a-f]{64}$/;

export function isIdempotencyKey(value: unknown): value is string {
  return typeof value === 'string' && IDEMPOTENCY_KEY_PATTERN.test(value);
}

/** tools/call params carrying the key (when there is one) in `_meta`. */
export function callParams(name: string, args: Record<string, unknown>, idempotencyKey: string | undefined): Record<string, unknown> {
  if (idempotencyKey === undefined) return { name, arguments: args };
  // The executor derives it, so this never happens; if it did, nothing is sent.
  if (!isIdempotencyKey(idempotencyKey))
    throw new NotDispatchedError(
      'mcp.idempotency_key_invalid',
      'An idempotency key is 64 lowercase hex characters; the call was not sent.',
    );
  return { name, arguments: args, _meta: { [IDEMPOTENCY_KEY_META]: idempotencyKey } };
}

/**
 * The key a message being POSTed carries: only a single JSON-RPC tools/call request whose
 * `_meta` holds a well-formed key (the header is derived from the body it travels with, so it
 * can never land on another request's POST).
 */
export function idempotencyKeyOf(message: unknown): string | null {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return null;
  const { method, params, id } = message as { method?: unknown; params?: unknown; id?: unknown };
  if (method !== 'tools/call' || id === undefined || typeof params !== 'object' || params === null) return null;
  const meta = (params as { _meta?: unknown })._meta;
  if (typeof meta !== 'object' || meta === null) return null;
  const key = (meta as Record<string, unknown>)[IDEMPOTENCY_KEY_META];
  return isIdempotencyKey(key) ? key : null;
}
