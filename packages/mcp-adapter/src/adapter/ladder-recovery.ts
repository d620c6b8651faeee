import { decideRecovery, type ToolSpecInput } from '@veetbot/domain';

/**
 * § A 401 mid-session, step 4: "the call is retried exactly once, and only where the recovery
 * table already permits a retry." The table is read with the watermark as it stands: the
 * executor commits effect_sent_at before invoking any tool whose side effect is not NONE
 * (§ The effect watermark, ADR-0040), so for such a call it is set by the time a 401 comes back.
 *
 * - READ_ONLY, IDEMPOTENT, and anything whose side effect is NONE: re-execute.
 * - CONDITIONALLY_IDEMPOTENT, watermark set: "replay with the same key" — the retry is the same
 *   request, the same application key in `_meta` and the Idempotency-Key header
 *   (docs/adr/0066), so a service that saw the first one deduplicates the second.
 * - NON_IDEMPOTENT, watermark set: UNCERTAIN, never retried.
 */
export function ladderMayRetry(spec: Pick<ToolSpecInput, 'side_effect' | 'idempotency'>): boolean {
  const watermark = spec.side_effect === 'none' ? null : WATERMARK_SET;
  return decideRecovery(spec.idempotency, watermark) !== 'uncertain';
}

/** decideRecovery reads only whether effect_sent_at is set; the executor owns its value. */
const WATERMARK_SET = 'set by the executor before the call';
