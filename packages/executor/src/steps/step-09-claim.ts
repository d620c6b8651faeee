import type { InvocationRow } from '@veetbot/ports';
import type { DurableDeps, RunContext } from '../durable-deps';
import { toolEvent } from '../tool-events';
import { SUSPENSION_EVENT_TYPES, suspensionEvent } from '../lifecycle/suspension';

/**
 * Step 9 [COMMIT]: claim for execution — RUNNING, started_at, attempt_number (a re-claim after
 * recovery increments it) — with tool.call.started, fenced by the run lease: a stale worker's
 * claim is refused.
 */
export function claim(d: DurableDeps, tenantId: string, row: InvocationRow, run: RunContext, now: Date): Promise<InvocationRow> {
  // An orchestration resumed after its bridge call's approval (docs/adr/0039) is not a crash:
  // the same attempt runs again, and the resumption is recorded with it.
  // docs/adr/0082: likewise a call resumed after its consent was answered (it runs again, with the grant).
  const resumed = (row.suspendedKind === 'approval' || row.suspendedKind === 'authorization') && row.suspendedRef !== null;
  const attemptNumber = row.status === 'running' && !resumed ? row.attemptNumber + 1 : row.attemptNumber;
  const events = [toolEvent('tool.call.started', { ...row, attemptNumber }, now, { effect_sent: row.effectSentAt !== null })];
  if (resumed && row.suspendedKind !== null)
    events.unshift(suspensionEvent(SUSPENSION_EVENT_TYPES.resumed, row, row.suspendedKind, row.suspendedRef ?? '', now));
  return d.invocations.claim(tenantId, row.id, run.fence, now, events);
}
