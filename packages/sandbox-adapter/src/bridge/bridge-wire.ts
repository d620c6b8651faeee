/**
 * The bridge's wire (docs/adr/0038): newline-delimited JSON frames on the turn's unix socket.
 * First frame `{ "token": "…" }`; then requests `{ "call", "arguments", "ordinal" }`, each
 * answered, in order, by the ToolResultItem the model would read. A protocol violation is
 * answered by one error frame `{ "error": { "code", "message" } }` and the connection ends.
 */

/** The largest frame the bridge reads, newline excluded. */
export const BRIDGE_MAX_FRAME_BYTES = 1024 * 1024;
/** A tool name longer than this is not a tool name (registry names are far shorter). */
const MAX_TOOL_NAME_LENGTH = 256;

/** Stable codes of the bridge's own error frames; each has one fixed message. */
export const BRIDGE_ERRORS = {
  'bridge.token_invalid': 'The token does not open this turn.',
  'bridge.frame_malformed': 'A frame is not a JSON object on one line.',
  'bridge.frame_too_large': 'A frame is larger than the bridge reads.',
  'bridge.request_invalid': 'A request needs "call" (a tool name) and optional "arguments".',
  'bridge.turn_closed': 'This turn has ended.',
  'bridge.connections_exhausted': 'This turn has as many open connections as it allows.',
} as const;
export type BridgeErrorCode = keyof typeof BRIDGE_ERRORS;

export function errorFrame(code: BridgeErrorCode): string {
  return `${JSON.stringify({ error: { code, message: BRIDGE_ERRORS[code] } })}\n`;
}

export type ParsedFrame = { readonly ok: true; readonly value: Record<string, unknown> } | { readonly ok: false };

/** One line as a JSON object, or not: never throws. */
export function parseFrame(line: string): ParsedFrame {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false };
  return { ok: true, value: value as Record<string, unknown> };
}

export interface BridgeRequest {
  readonly toolName: string;
  readonly arguments: unknown;
}

/**
 * `call` must be a non-empty tool name; `arguments` is any JSON value (absent: `{}`), validated
 * later by the pipeline against the tool's schema. `ordinal` is read by nobody: the bridge counts.
 */
export function parseRequest(frame: Record<string, unknown>): BridgeRequest | null {
  const call = frame.call;
  if (typeof call !== 'string' || call.length === 0 || call.length > MAX_TOOL_NAME_LENGTH) return null;
  return { toolName: call, arguments: Object.hasOwn(frame, 'arguments') ? frame.arguments : {} };
}
