import { FencingError, type InvocationStatus, type StepBatch } from '@veetbot/domain';
import { everyCallConcluded, executeToolCall, outcomeRowsByCall, settleRefusedRecovery, type RunContext } from '@veetbot/executor';
import type { InvocationRow, RunRow, SessionRow } from '@veetbot/ports';
import { reconcileUncertain, type ReconcileReport } from './reconcile-uncertain';
import { requestOf } from './request-of';
import { ActiveRuns, RunAborted, withRunLease, type HeldRun } from './run-lease';
import { pipelinesFor, type RuntimeCore } from './runtime-core';
import { atWork, runEnded, tearDown } from './run-teardown';
import { ensureSessionTools } from './session-tools';
import { fromStoredBatch } from './stored-batch';

export interface SweepReport {
  /** RUNNING rows whose lease had expired (or been released), suspended rows excluded. */
  readonly examined: number;
  /** Re-executed or replayed to success. */
  readonly recovered: number;
  /** Ended UNCERTAIN: the effect may have escaped (non-idempotent, watermark set). */
  readonly uncertain: number;
  /** Ended FAILED or DENIED: attempts exhausted, the run ended, a retry that failed, authority withdrawn. */
  readonly failed: number;
  /**
   * Left for a later pass: the run is held live, its batch is unreadable, or the row is still in
   * flight — or left for a person: the pre-effect re-check now asks for an approval and the row
   * waits for it (docs/adr/0023); deciding it re-queues the step.
   */
  readonly skipped: number;
  /**
   * docs/adr/0063, only when reconcilers are composed: the pass over unreviewed UNCERTAIN rows
   * that follows (including the rows this sweep just ended UNCERTAIN).
   */
  readonly reconciled?: ReconcileReport;
}

interface MutableReport {
  examined: number;
  recovered: number;
  uncertain: number;
  failed: number;
  skipped: number;
}

const counted = (r: MutableReport): number => r.recovered + r.uncertain + r.failed + r.skipped;

const ENDED = new Set(['succeeded', 'failed', 'cancelled']);

/**
 * ARCHITECTURE.md "A call's path", 5: a worker that dies leaves RUNNING rows whose lease
 * expires. For each run with such rows, take its lease (skip it when someone holds it live),
 * rebuild each row's request from its step's stored batch, and resubmit it through the one
 * pipeline. Steps 1–7 run again — the once-per-attempt pre-effect authorization re-check —
 * and step 8 dedups to the existing row and applies the recovery table from the row's own
 * idempotency_class and effect_sent_at: re-execute, replay with the same key, UNCERTAIN, or
 * FAILED tool.recovery_exhausted once the attempts are spent. Suspended rows never come back
 * from the store query (§ Control tools).
 */
export async function sweep(core: RuntimeCore): Promise<SweepReport> {
  const rows = await core.deps.stores.invocations.findExpiredRunning(core.deps.clock.now(), core.settings.sweepBatchSize);
  const report: MutableReport = { examined: rows.length, recovered: 0, uncertain: 0, failed: 0, skipped: 0 };
  const byRun = new Map<string, InvocationRow[]>();
  for (const row of rows) {
    const key = ActiveRuns.key(row.tenantId, row.runId);
    const group = byRun.get(key);
    if (group === undefined) byRun.set(key, [row]);
    else group.push(row);
  }
  for (const group of byRun.values()) {
    const { tenantId, runId } = group[0]!;
    const countedBefore = counted(report);
    try {
      const held = await withRunLease(core.lease, tenantId, runId, (h) => recoverRun(core, tenantId, runId, group, h, report));
      // § MCP: a recovered run that had already ended has had its teardown.
      if (held.held && held.value !== null) await tearDown(core, tenantId, held.value);
      if (!held.held) report.skipped += group.length;
    } catch {
      // The run vanished or the store failed outside any one row: what was not settled is
      // left for a later pass.
      report.skipped += group.length - (counted(report) - countedBefore);
    }
  }
  const reconciled = await reconcileUncertain(core).catch(() => undefined);
  return reconciled === undefined ? report : { ...report, reconciled };
}

/** Settles the rows; answers the run's session id when the run has ended (its teardown is due), else null. */
async function recoverRun(
  core: RuntimeCore,
  tenantId: string,
  runId: string,
  rows: readonly InvocationRow[],
  held: HeldRun,
  report: MutableReport,
): Promise<string | null> {
  const { stores } = core.deps;
  const run = await stores.runs.get(tenantId, runId);
  const session = run === null ? null : await stores.sessions.get(tenantId, run.sessionId);
  if (run === null || session === null) {
    report.skipped += rows.length;
    return null;
  }
  await atWork(core, tenantId, session.id, () => recoverRows(core, tenantId, runId, run, session, rows, held, report));
  return ENDED.has(run.status) || runEnded(held.signal) ? session.id : null;
}

async function recoverRows(
  core: RuntimeCore,
  tenantId: string,
  runId: string,
  run: RunRow,
  session: SessionRow,
  rows: readonly InvocationRow[],
  held: HeldRun,
  report: MutableReport,
): Promise<void> {
  const { stores } = core.deps;
  const view = core.views.of(session);
  const tenant = pipelinesFor(core, tenantId);
  const workspace = await core.deps.workspaces.forRun(tenantId, runId);
  // A run that already ended executes nothing more: the pipeline still settles each row
  // (UNCERTAIN where the effect may have escaped), and anything it would re-run stops at
  // step 10 as tool.run_cancelled.
  const signal = ENDED.has(run.status)
    ? AbortSignal.abort(new RunAborted(run.status === 'cancelled' ? 'cancelled' : 'run_ended'))
    : held.signal;

  const batches = new Map<number, StepBatch | null>();
  const loadBatch = async (stepNumber: number): Promise<StepBatch | null> => {
    if (!batches.has(stepNumber)) {
      const step = await stores.steps.get(tenantId, runId, stepNumber);
      batches.set(stepNumber, step === null ? null : fromStoredBatch(step.batch).batch);
    }
    return batches.get(stepNumber) ?? null;
  };

  for (const [index, row] of rows.entries()) {
    const batch = await loadBatch(row.stepNumber);
    const call = batch?.calls.find((c) => c.callId === row.callId);
    if (batch === null || call === undefined) {
      // Not a call this runtime submitted (no stored batch to rebuild it from).
      report.skipped += 1;
      continue;
    }
    const request = requestOf({ tenantId, sessionId: run.sessionId, runId, stepNumber: row.stepNumber, principal: batch.principal }, call);
    const context: RunContext = {
      fence: held.fence,
      deadlineAt: run.deadlineAt,
      ...(batch.callerTimeoutSeconds === undefined ? {} : { callerTimeoutSeconds: batch.callerTimeoutSeconds }),
      parallelGroup: row.parallelGroup,
      workspace,
      signal,
    };
    let final: InvocationStatus;
    try {
      await ensureSessionTools(core, tenant.registry, session, batch.principal, core.preparedSessions);
      const result = await executeToolCall(tenant.pipeline, view, request, { dryRun: false, run: context });
      // Steps 1–7 may now refuse a call a dead worker had started: the row must still end.
      final = await settleRefusedRecovery(core.pipeline.durable, tenantId, row, held, () => core.deps.clock.now(), result);
    } catch (error) {
      if (FencingError.isInstance(error)) {
        // Another worker took the run: every remaining row is theirs now.
        report.skipped += rows.length - index;
        return;
      }
      report.skipped += 1;
      continue;
    }
    if (final === 'succeeded') report.recovered += 1;
    else if (final === 'uncertain') report.uncertain += 1;
    else if (final === 'failed' || final === 'denied') report.failed += 1;
    else report.skipped += 1;
  }

  await completeSettledSteps(core, tenantId, runId, [...batches.entries()]);
}

/**
 * A step whose every call now has a terminal row has ended (§ Parallel calls). A step holding
 * calls that never started (its worker died before reaching them) goes back to `pending`: this
 * sweep releases the run's lease when it is done, and the step queue claims a `running` step
 * only while a dead worker's lease is still set on its run — left `running`, those calls would
 * never run. Claimed again, the step is resubmitted: the calls that never started run, and
 * every call that did start dedups to its row.
 */
async function completeSettledSteps(
  core: RuntimeCore,
  tenantId: string,
  runId: string,
  steps: readonly [number, StepBatch | null][],
): Promise<void> {
  const { stores } = core.deps;
  if (steps.length === 0) return;
  const rows = await stores.invocations.listForRun(tenantId, runId);
  for (const [stepNumber, batch] of steps) {
    if (batch === null) continue;
    const byCall = outcomeRowsByCall(rows.filter((r) => r.stepNumber === stepNumber));
    const settled = everyCallConcluded(
      batch.calls.map((c) => c.callId),
      byCall,
    );
    const stranded = !settled && batch.calls.some((c) => !byCall.has(c.callId));
    // The step row is read only when its status may change.
    if (!settled && !stranded) continue;
    const step = await stores.steps.get(tenantId, runId, stepNumber);
    if (step === null || step.status === 'completed') continue;
    if (settled) await stores.steps.setStatus(tenantId, runId, stepNumber, 'completed');
    else if (step.status === 'running') await stores.steps.setStatus(tenantId, runId, stepNumber, 'pending');
  }
}
