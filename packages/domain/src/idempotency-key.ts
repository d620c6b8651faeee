import { sha256Hex } from './canonical-json';
import { VeetbotError } from './errors';

/** The key-space tag (§ The key). A change to the derivation is a new tag, never a collision. */
export const IDEMPOTENCY_KEY_TAG = 'veetbot.tool.v1';

export interface IdempotencyKeyInput {
  readonly runId: string;
  readonly stepNumber: number;
  readonly callId: string;
  readonly toolName: string;
  readonly toolVersion: string;
  readonly argumentsHash: string;
}

/**
 * § Idempotency: sha256(tag NUL run_id NUL step_number NUL call_id NUL tool_name NUL
 * tool_version NUL normalized_arguments_hash), lowercase hex. attempt_number is deliberately
 * not an input: a retry must present the same key to the external service.
 */
export function idempotencyKey(input: IdempotencyKeyInput): string {
  return sha256Hex(
    [IDEMPOTENCY_KEY_TAG, input.runId, String(input.stepNumber), input.callId, input.toolName, input.toolVersion, input.argumentsHash].join(
      '\0',
    ),
  );
}

/**
 * § The programmatic orchestration bridge: call_id = "bridge:" + sha256(script_hash NUL
 * ordinal)[:32]. The ordinal is counted by the bridge, never supplied by the script.
 */
export function bridgeCallId(scriptHash: string, ordinal: number): string {
  if (!Number.isSafeInteger(ordinal) || ordinal < 0)
    throw new VeetbotError('domain.bridge_ordinal_invalid', 'A bridge ordinal is a non-negative integer.');
  return `bridge:${sha256Hex(`${scriptHash}\0${ordinal}`).slice(0, 32)}`;
}
