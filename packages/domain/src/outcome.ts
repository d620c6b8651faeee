import { z } from 'zod';
import { Remediation, ToolOutcomeStatus } from './enums';
import { ReasonCode } from './tool-result';
import { reasonCodeEntry } from './reason-codes';
import { VeetbotError } from './errors';

/**
 * § What the model reads: six fields, always the same six, for every status (Hard gate 4).
 * `.strict()` so an extra field is a parse error, not a leak.
 */
export const ToolOutcome = z
  .object({
    status: ToolOutcomeStatus,
    action: z.string(),
    reason_code: ReasonCode,
    message: z.string(),
    retryable: z.boolean(),
    remediation: Remediation,
  })
  .strict();
export type ToolOutcome = z.infer<typeof ToolOutcome>;

export const OUTCOME_FIELDS = ['status', 'action', 'reason_code', 'message', 'retryable', 'remediation'] as const;

export class UnknownReasonCodeError extends VeetbotError {
  constructor(code: string) {
    super('domain.reason_code_unknown', `Reason code is not in the checked-in table: ${code}`);
  }
}

export interface RenderOutcomeInput {
  /** The tool name the model called (for tool.call: the deferred tool's own name). */
  readonly action: string;
  readonly reasonCode: string;
  /** A tool's ToolFailure.retryable may narrow the table's default to false; it never widens it. */
  readonly retryable?: boolean;
}

/**
 * Build the six-field outcome. status, message and remediation come from the table and
 * nowhere else: no caller can put text in `message` (Hard gate 5).
 */
export function renderOutcome(input: RenderOutcomeInput): ToolOutcome {
  const entry = reasonCodeEntry(input.reasonCode);
  if (!entry) throw new UnknownReasonCodeError(input.reasonCode);
  const retryable = entry.status === 'uncertain' || entry.status === 'denied' ? false : entry.retryable && (input.retryable ?? true);
  return {
    status: entry.status,
    action: input.action,
    reason_code: input.reasonCode,
    message: entry.message,
    retryable,
    remediation: entry.remediation,
  };
}
