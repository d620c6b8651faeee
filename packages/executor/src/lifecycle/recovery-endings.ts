import { isTerminalInvocationStatus, type InvocationStatus, type RenderedContentPart } from '@veetbot/domain';
import type { InvocationRow } from '@veetbot/ports';
import type { RunContext } from '../durable-deps';
import type { PipelineResult } from '../pipeline-result';
import type { Concluded } from '../render-item';
import { endWithoutResult, type TerminalWriter, type Terminated } from './terminal-write';
import { isSuspended } from './suspension';

/**
 * A started attempt (a row past step 8) whose authority steps 1–7 now refuse ends here. The
 * watermark says how: a NON_IDEMPOTENT call with effect_sent_at set may have escaped and is
 * UNCERTAIN tool.outcome_unknown (Decision 8 reserves UNCERTAIN for exactly that); otherwise the
 * refusal is the outcome. The existing watermark never substitutes for current authority.
 */
export function endRefusedAttempt(
  d: TerminalWriter,
  tenantId: string,
  row: InvocationRow,
  run: Pick<RunContext, 'fence'>,
  now: Date,
  refusal: Pick<Concluded, 'invocationStatus' | 'item'>,
  notes: readonly RenderedContentPart[] = [],
): Promise<Terminated> {
  const mayHaveEscaped = row.effectSentAt !== null && row.idempotencyClass === 'non_idempotent';
  if (mayHaveEscaped) return endWithoutResult(d, tenantId, row, run, now, 'uncertain', 'tool.outcome_unknown');
  return endWithoutResult(
    d,
    tenantId,
    row,
    run,
    now,
    refusal.invocationStatus === 'denied' ? 'denied' : 'failed',
    refusal.item.outcome.reason_code,
    notes,
  );
}

/**
 * The sweep resubmitted a RUNNING row a dead worker left, and steps 1–7 now refuse the call (its
 * principal lost a scope, policy changed): the pipeline then concludes without touching the
 * RUNNING row, because a refusal at steps 1–5 is recorded under a different key. The row must
 * still end (endRefusedAttempt). Refusals at steps 6–7 share the key, and the pipeline has
 * settled the row itself by then; a row that is no longer RUNNING, or is suspended, or a result
 * that is not a terminal conclusion, is left as it is. Answers the row's status afterwards.
 */
export async function settleRefusedRecovery(
  d: TerminalWriter,
  tenantId: string,
  row: InvocationRow,
  run: Pick<RunContext, 'fence'>,
  now: () => Date,
  result: PipelineResult,
): Promise<InvocationStatus> {
  const current = await d.invocations.getById(tenantId, row.id);
  if (current === null) return row.status;
  if (current.status !== 'running' || current.suspendedKind !== null) return current.status;
  if (result.kind !== 'concluded' || !isTerminalInvocationStatus(result.invocationStatus)) return current.status;
  return (await endRefusedAttempt(d, tenantId, current, run, now(), result)).row.status;
}

/**
 * § Control tools: "A suspended invocation whose run is cancelled is completed as failed with
 * tool.run_cancelled." Ends every suspended row among `rows`, under the lease the caller holds.
 */
export async function endSuspendedOfCancelledRun(
  d: TerminalWriter,
  tenantId: string,
  rows: readonly InvocationRow[],
  run: Pick<RunContext, 'fence'>,
  now: () => Date,
): Promise<void> {
  for (const row of rows) {
    if (isSuspended(row)) await endWithoutResult(d, tenantId, row, run, now(), 'failed', 'tool.run_cancelled');
  }
}
