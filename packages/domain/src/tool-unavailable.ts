import { VeetbotError } from './errors';

/** The unavailable family (§ Advertisement is pinned: availability is resolved at call time). */
export type UnavailableReasonCode =
  | 'tool.server_unreachable'
  | 'tool.server_unauthorized'
  | 'tool.withdrawn'
  | 'tool.device_offline'
  | 'tool.auth_failed'
  | 'tool.auth_unsupported';

/**
 * A ToolResult cannot express unavailability — a tool that cannot be reached cannot return
 * anything (§ The two result shapes). An adapter that finds no route throws this instead, and
 * step 11 turns it into the unavailable outcome: unless the call is non-idempotent and its
 * watermark is set, in which case nobody knows whether the effect landed and it is UNCERTAIN.
 */
export class ToolUnavailableError extends VeetbotError {
  declare readonly code: UnavailableReasonCode;
  /** Operator-facing; never shown to the model. */
  readonly detail: string;
  /** True once the request left this process: the effect may have happened. */
  readonly dispatched: boolean;

  constructor(code: UnavailableReasonCode, detail: string, options: { dispatched?: boolean; cause?: unknown } = {}) {
    super(code, 'The tool is unavailable.', {
      retryable: code === 'tool.server_unreachable' || code === 'tool.device_offline',
      cause: options.cause,
    });
    this.detail = detail;
    this.dispatched = options.dispatched ?? false;
  }

  static override isInstance(value: unknown): value is ToolUnavailableError {
    return (
      VeetbotError.isInstance(value) && typeof (value as ToolUnavailableError).dispatched === 'boolean' && value.code.startsWith('tool.')
    );
  }
}
