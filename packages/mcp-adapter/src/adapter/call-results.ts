import { ToolUnavailableError, type SecretRedactor, type ToolResultInput, type ToolSpecInput } from '@veetbot/domain';
import { httpStatusOf, isJsonRpcError, isRequestTimeout, wasDispatched } from '../connection/mcp-connection';
import { isOversizeError, ParamHeadersTooLargeError } from '../errors';
import { isSdkError } from '../sdk';
import type { LooseCallToolResult } from '../connection/result-schemas';
import { contentText, contentToParts } from '../mapping/content';
import { cutUtf8 } from '../mapping/description';

type CallSpec = Pick<ToolSpecInput, 'side_effect' | 'idempotency'>;

/**
 * Decision 26: a side-effecting call whose idempotency class is neither READ_ONLY nor
 * IDEMPOTENT cannot be failed ordinarily once it was sent — nobody knows whether its effect
 * landed. Keyed on the classification, never on a server name.
 */
export function outcomeIsUncertainOnError(spec: CallSpec): boolean {
  return spec.side_effect !== 'none' && spec.idempotency !== 'read_only' && spec.idempotency !== 'idempotent';
}

/** § Failure modes: the one content-free marker a server may use to say no effect was applied. */
export function declaresNotApplied(result: LooseCallToolResult): boolean {
  return result.structuredContent?.effect_status === 'not_applied';
}

export function outcomeUnknown(detail: string, externalText: string | null): ToolResultInput {
  return {
    ok: false,
    content: [],
    failure: { kind: 'outcome_unknown', reason_code: 'tool.outcome_unknown', detail, retryable: false, external_text: externalText },
  };
}

/** External text is data: bounded, and never in `detail` (Hard gate 5). */
function external(text: string, maximumBytes: number): string | null {
  return text === '' ? null : cutUtf8(text, Math.max(1024, maximumBytes));
}

/** A tools/call result as a ToolResult (the executor forces EXTERNAL_UNTRUSTED on it regardless). */
export function mapCallResult(
  raw: LooseCallToolResult,
  spec: CallSpec,
  scrubber: SecretRedactor,
  maximumOutputBytes: number,
): ToolResultInput {
  // Every item, and the text items read as one: a secret split across two is caught (docs/adr/0053).
  const result = scrubber.redactResult(raw);
  if (result.isError !== true) {
    return {
      ok: true,
      content: contentToParts(result.content),
      structured: result.structuredContent ?? null,
      output_trust: 'external_untrusted',
    };
  }
  const text = external(contentText(result.content), maximumOutputBytes);
  if (outcomeIsUncertainOnError(spec) && !declaresNotApplied(result)) {
    return outcomeUnknown('The server reported an error after a side-effecting call was sent; whether the effect landed is unknown.', text);
  }
  return {
    ok: false,
    content: [],
    failure: {
      kind: 'upstream_error',
      reason_code: 'tool.upstream_error',
      detail: 'The server reported an error result (isError).',
      retryable: !outcomeIsUncertainOnError(spec),
      external_text: text,
    },
  };
}

/**
 * A tools/call that did not return a result. Not dispatched: unavailable, nothing happened.
 * Dispatched: for the uncertain classes Decision 26 applies (outcome_unknown); otherwise a
 * server's own JSON-RPC error is an upstream failure, our timeout is a timeout, and a dropped
 * connection is unavailable (`dispatched: true`, so step 11 keeps its own rule too).
 */
export function mapCallError(error: unknown, spec: CallSpec, scrubber: SecretRedactor, maximumOutputBytes: number): ToolResultInput {
  if (error instanceof ParamHeadersTooLargeError) {
    // Refused before sending (docs/adr/0064): certain that nothing happened, whatever the class,
    // and the model can shorten the argument.
    return {
      ok: false,
      content: [],
      failure: {
        kind: 'invalid_arguments',
        reason_code: 'tool.invalid_arguments.mcp_param_headers_too_large',
        detail: `The arguments this server takes as HTTP headers (x-mcp-header) exceed ${error.limitBytes} bytes; the call was not sent.`,
        retryable: false,
        external_text: null,
      },
    };
  }
  if (!wasDispatched(error))
    throw new ToolUnavailableError('tool.server_unreachable', 'The server could not be reached; the call was not sent.', {
      dispatched: false,
      cause: error,
    });
  const uncertain = outcomeIsUncertainOnError(spec);
  if (isOversizeError(error)) {
    // The server answered with a message over the cap; it was dropped unread, so whether it was
    // a result or an error is unknown. § Output limits: a tool that streams past the ceiling is
    // OUTPUT_TOO_LARGE; Decision 26 still holds for the uncertain classes (ADR 0021), whose code
    // says why as well.
    if (uncertain) {
      return {
        ok: false,
        content: [],
        failure: {
          kind: 'outcome_unknown',
          reason_code: 'tool.outcome_unknown.mcp_response_too_large',
          detail: `The server's response to a side-effecting call was larger than ${error.limitBytes} bytes and was dropped; whether the effect landed is unknown.`,
          retryable: false,
          external_text: null,
        },
      };
    }
    return {
      ok: false,
      content: [],
      failure: {
        kind: 'output_too_large',
        reason_code: 'tool.output_too_large.mcp_response',
        detail: `The server's response was larger than ${error.limitBytes} bytes and was dropped.`,
        retryable: false,
        external_text: null,
      },
    };
  }
  if (isMalformedResponse(error)) {
    // Not JSON, not JSON-RPC, or not a valid result: the server answered, with nothing a client can read.
    if (uncertain)
      return outcomeUnknown(
        'The server answered a side-effecting call with a response that is not a readable JSON-RPC result; whether the effect landed is unknown.',
        null,
      );
    return {
      ok: false,
      content: [],
      failure: {
        kind: 'transport',
        reason_code: 'tool.transport.mcp_response_invalid',
        detail: 'The server answered with a response that is not a readable JSON-RPC result.',
        retryable: true,
        external_text: null,
      },
    };
  }
  if (isJsonRpcError(error)) {
    const text = external(scrubber.redact(error.message), maximumOutputBytes);
    if (uncertain)
      return outcomeUnknown('The server answered a side-effecting call with a JSON-RPC error; whether the effect landed is unknown.', text);
    return {
      ok: false,
      content: [],
      failure: {
        kind: 'upstream_error',
        reason_code: 'tool.upstream_error',
        detail: `The server answered with JSON-RPC error ${error.code}.`,
        retryable: true,
        external_text: text,
      },
    };
  }
  if (isInputNotGiven(error)) {
    // 2026-07-28 (docs/adr/0060): the server kept answering input_required past the round cap,
    // or asked for input this client does not give (sampling, roots, or elicitation without
    // anyone to answer). It was sent and answered; the call did not complete.
    if (uncertain) return outcomeUnknown('The server required input the client did not give after a side-effecting call was sent.', null);
    return {
      ok: false,
      content: [],
      failure: {
        kind: 'upstream_error',
        reason_code: 'tool.upstream_error',
        detail: 'The server required input the client does not give, or kept requiring it past the round limit.',
        retryable: false,
        external_text: null,
      },
    };
  }
  if (isRequestTimeout(error)) {
    if (uncertain) return outcomeUnknown('A side-effecting call timed out after it was sent.', null);
    return {
      ok: false,
      content: [],
      failure: {
        kind: 'timeout',
        reason_code: 'tool.timeout',
        detail: 'The server did not answer within the request timeout.',
        retryable: true,
        external_text: null,
      },
    };
  }
  if (httpStatusOf(error) === 403) {
    if (uncertain) return outcomeUnknown('A side-effecting call was refused with HTTP 403 after it was sent.', null);
    return {
      ok: false,
      content: [],
      failure: {
        kind: 'permission',
        reason_code: 'tool.permission',
        detail: 'The server refused the request (HTTP 403).',
        retryable: false,
        external_text: null,
      },
    };
  }
  if (uncertain) return outcomeUnknown('The connection failed after a side-effecting call was sent.', null);
  throw new ToolUnavailableError('tool.server_unreachable', 'The connection to the server failed during the call.', {
    dispatched: true,
    cause: error,
  });
}

/**
 * The SDK's parse of a JSON response body failed: not JSON (SyntaxError), not JSON-RPC (a zod
 * error), or a result its schema refuses (SdkError InvalidResult: at 2026-07-28 the SDK's codec
 * reads every tools/call result with its wire schema, docs/adr/0064). The server answered, with
 * nothing a client can read — not a failed connection.
 */
function isMalformedResponse(error: unknown): boolean {
  return error instanceof SyntaxError || (error instanceof Error && error.name === 'ZodError') || isSdkError(error, 'InvalidResult');
}

/** An input_required flow the SDK's driver ended: rounds exhausted, or input it has no handler for. */
function isInputNotGiven(error: unknown): boolean {
  return (
    isSdkError(error, 'InputRequiredRoundsExceeded') ||
    // Only the driver's "no handler for this input request" (its data names the request's key),
    // not the SDK's own capability assertions before sending.
    (isSdkError(error, 'CapabilityNotSupported') && typeof (error as { data?: { key?: unknown } }).data?.key === 'string') ||
    isSdkError(error, 'UnsupportedResultType')
  );
}
