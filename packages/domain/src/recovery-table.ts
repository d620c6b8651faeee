import type { IdempotencyClass } from './enums';

export type RecoveryDecision = 're_execute' | 'replay' | 'uncertain';

/**
 * § The effect watermark: recovery reads a fact rather than making an inference.
 *
 *   READ_ONLY                 any   re-execute
 *   IDEMPOTENT                any   re-execute
 *   CONDITIONALLY_IDEMPOTENT  NULL  re-execute; nothing was sent
 *   CONDITIONALLY_IDEMPOTENT  set   replay with the same key
 *   NON_IDEMPOTENT            NULL  re-execute; nothing was sent
 *   NON_IDEMPOTENT            set   UNCERTAIN; human review
 */
export function decideRecovery(idempotencyClass: IdempotencyClass, effectSentAt: Date | string | null | undefined): RecoveryDecision {
  const sent = effectSentAt !== null && effectSentAt !== undefined;
  switch (idempotencyClass) {
    case 'read_only':
    case 'idempotent':
      return 're_execute';
    case 'conditionally_idempotent':
      return sent ? 'replay' : 're_execute';
    case 'non_idempotent':
      return sent ? 'uncertain' : 're_execute';
  }
}
