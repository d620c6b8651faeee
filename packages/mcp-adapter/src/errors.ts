import { VeetbotError } from '@veetbot/domain';

/**
 * The adapter's typed errors. None of them carries text a remote server wrote: a server's
 * words are external text (§ Authentication: "What the tenant and the model see is a reason
 * code"), so messages here are fixed and the code is what callers act on.
 */
export class McpAdapterError extends VeetbotError {
  constructor(
    code: `mcp.${string}` | `egress.${string}` | `tool.${string}`,
    message: string,
    options: { retryable?: boolean; cause?: unknown } = {},
  ) {
    super(code, message, options);
  }
}

/** A stdout line (stdio) or a response body line (HTTP) grew past the per-line cap. */
export class LineTooLongError extends McpAdapterError {
  readonly limitBytes: number;
  constructor(limitBytes: number) {
    super('mcp.transport.line_too_long', `The server sent more than ${limitBytes} bytes without a newline; the connection was closed.`);
    this.limitBytes = limitBytes;
  }
}

/**
 * An HTTP response carried one message larger than the cap (a JSON body, or one SSE event):
 * the body was dropped and its connection closed. The request had been sent.
 */
export class ResponseTooLargeError extends McpAdapterError {
  readonly limitBytes: number;
  constructor(limitBytes: number) {
    super('mcp.transport.response_too_large', `The server sent a message larger than ${limitBytes} bytes; the response was dropped.`);
    this.limitBytes = limitBytes;
  }
}

/** Either size cap: one stdio line, or one HTTP message. */
export function isOversizeError(error: unknown): error is LineTooLongError | ResponseTooLargeError {
  return error instanceof LineTooLongError || error instanceof ResponseTooLargeError;
}

/**
 * The transport could not take the message: it was never written, so the request never left
 * this process (`dispatched` false — the distinction step 11 needs).
 */
export class NotDispatchedError extends McpAdapterError {
  readonly dispatched = false as const;
  constructor(
    code: 'mcp.transport.closed' | 'mcp.transport.connect_failed' | 'mcp.idempotency_key_invalid',
    message: string,
    cause?: unknown,
  ) {
    super(code, message, { retryable: true, cause });
  }

  static is(value: unknown): value is NotDispatchedError {
    return (
      VeetbotError.isInstance(value) &&
      (value as { dispatched?: unknown }).dispatched === false &&
      (value.code === 'mcp.transport.closed' || value.code === 'mcp.transport.connect_failed')
    );
  }
}

/**
 * SEP-2243: the Mcp-Param-* headers a tools/call would carry (its x-mcp-header arguments) are
 * over the cap. Refused before the request is made — nothing was sent, so the call failed
 * cleanly rather than meeting a 431 whose effect nobody can vouch for (docs/adr/0064).
 */
export class ParamHeadersTooLargeError extends McpAdapterError {
  readonly dispatched = false as const;
  readonly limitBytes: number;
  constructor(limitBytes: number) {
    super('mcp.transport.param_headers_too_large', `The arguments mirrored into Mcp-Param-* headers exceed ${limitBytes} bytes.`);
    this.limitBytes = limitBytes;
  }
}

/** RULINGS.md "Egress": the policy refused a destination (a URL, a token endpoint, a redirect). */
export class EgressRefusedError extends McpAdapterError {
  constructor(code: `egress.${string}`, message: string) {
    super(code, message);
  }
}

/** § Authentication: the two terminal connect-time outcomes. */
export class McpAuthError extends McpAdapterError {
  declare readonly code: 'tool.auth_failed' | 'tool.auth_unsupported';
  constructor(code: 'tool.auth_failed' | 'tool.auth_unsupported', message: string, cause?: unknown) {
    super(code, message, { cause });
  }
}

/** § Sampling and roots are refused: a server that requires them fails to connect. */
export class CapabilityRequiredError extends McpAdapterError {
  constructor(cause?: unknown) {
    super('mcp.capability_required', 'The server requires a client capability this platform does not offer (sampling or roots).', {
      cause,
    });
  }
}
