import type { InvocationRow } from '@veetbot/ports';
import type { DurableDeps, RunContext } from '../durable-deps';
import { toolEvent } from '../tool-events';

/**
 * Step 9 [COMMIT]: claim for execution — RUNNING, started_at, attempt_number (a re-claim after
 * recovery increments it) — with tool.call.started, fenced by the run lease: a stale worker's
 * claim is refused.
 */
export function claim(d: DurableDeps, tenantId: string, row: InvocationRow, run: RunContext, now: Date): Promise<InvocationRow> {
  const attemptNumber = row.status === 'running' ? row.attemptNumber + 1 : row.attemptNumber;
  return d.invocations.claim(tenantId, row.id, run.fence, now, [
    toolEvent('tool.call.started', { ...row, attemptNumber }, now, { effect_sent: row.effectSentAt !== null }),
  ]);
}
