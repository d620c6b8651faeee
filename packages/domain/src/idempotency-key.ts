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

/**
 * A uuid derived from `parts` (sha256 of the parts joined by NUL, shaped as an RFC 9562
 * version-8 uuid, variant 10): a row whose id must come out the same when its writer runs
 * again — a replayed skill.manage write, a recovered delegate.run's child run and session.
 */
export function derivedUuid(...parts: readonly string[]): string {
  const h = sha256Hex(parts.join('\u0000'));
  const variant = ((Number.parseInt(h[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
