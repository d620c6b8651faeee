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

/**
 * docs/adr/0077: the delegated authorization flow (the authorization code grant) was refused
 * for a stated reason. The code is the detail (`mcp.auth.*`); the connection's reason code is
 * `tool.auth_failed` (connectReasonCode). Messages are fixed: nothing an authorization server
 * wrote, and never a token, code or verifier.
 */
export const MCP_AUTH_REFUSALS = [
  /** A `state` that is not the one outstanding flow's: replayed, forged, or another flow's (an injected code). */
  'mcp.auth.state_mismatch',
  /** RFC 8414 §3.3 / RFC 9207: an issuer that is not the one the metadata named (mix-up), or a missing `iss` the server promised. */
  'mcp.auth.issuer_mismatch',
  /** The protected resource metadata names a resource other than this server (RFC 9728 §3.3). */
  'mcp.auth.resource_mismatch',
  /** A token response without an `access_token`, or not a bearer token. */
  'mcp.auth.token_response_invalid',
  /** An authorization or token endpoint on plain http (only a loopback host with private addresses allowed is exempt). */
  'mcp.auth.insecure_endpoint',
  /** The egress policy refused a metadata, registration, token or authorization URL (or a redirect to one). */
  'mcp.auth.endpoint_refused',
  /** The authorization response was not a redirect to our redirect URI with a code (or it carried `error`). */
  'mcp.auth.authorization_refused',
  /** The server kept answering insufficient_scope after STEP_UP_MAX_ATTEMPTS authorizations. */
  'mcp.auth.step_up_exhausted',
  /** A pre-registered client with a secret, and a token endpoint that offers no method for one (docs/adr/0083). */
  'mcp.auth.client_auth_unsupported',
  /** No usable metadata, registration or grant: the flow could not complete. */
  'mcp.auth.flow_failed',
] as const;
export type McpAuthRefusal = (typeof MCP_AUTH_REFUSALS)[number];

export class McpAuthorizationError extends McpAdapterError {
  declare readonly code: McpAuthRefusal;
  constructor(code: McpAuthRefusal, message: string, cause?: unknown) {
    super(code, message, { cause });
  }
}

/**
 * A server needs a person's consent and no one can give it here (no authorization user agent:
 * the worker until consent suspends a run). `tool.auth_unsupported`, as before; it carries the
 * authorization link and its bound state for the consent surface to come (docs/adr/0077).
 */
/**
 * docs/adr/0082: what the code exchange needs from the flow that asked for consent — the PKCE
 * verifier, the client registration, the discovery state — so another process (the api's
 * callback) can finish it. Secret: sealed before it is stored, never logged.
 */
export interface DelegatedFlowSnapshot {
  readonly serverUrl: string;
  readonly resourceMetadataUrl: string | null;
  readonly scope: string | null;
  readonly redirectUri: string;
  readonly codeVerifier: string;
  readonly clientInformation: Readonly<Record<string, unknown>>;
  readonly discoveryState: Readonly<Record<string, unknown>> | null;
  /** The authorization server the request was sent to (the callback's expected `iss`). */
  readonly issuer: string;
}

export class McpConsentRequiredError extends McpAuthError {
  readonly authorizationUrl: string;
  readonly state: string;
  /** Private (not enumerable): a logger that serializes the error never sees the verifier. */
  #flow: DelegatedFlowSnapshot | null;
  constructor(authorizationUrl: string, state: string, flow: DelegatedFlowSnapshot | null = null) {
    super('tool.auth_unsupported', 'The server requires a person to authorize access (a user-delegated OAuth flow).');
    this.authorizationUrl = authorizationUrl;
    this.state = state;
    this.#flow = flow;
  }

  /** The flow to seal with the pending consent (docs/adr/0082); handed over once. */
  takeFlow(): DelegatedFlowSnapshot | null {
    const flow = this.#flow;
    this.#flow = null;
    return flow;
  }
}
