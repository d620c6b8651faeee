import type { StepOutcome } from '@veetbot/client';
import { readStep, renderToolResultItem } from '@veetbot/executor';
import type { PendingStep, RunRow, StepRow } from '@veetbot/ports';
import { fromStoredBatch, replayBreaker } from '@veetbot/runtime';
import type { ApiDeps } from './deps';

/**
 * A step's outcome, read from the rows alone (the worker that ran it may be another process).
 * Which row is each call's outcome and whether the step has settled is the executor's reading
 * (readStep, docs/adr/0028); this renders it: one ToolResultItem per call with a terminal row —
 * rendered by the pipeline's own step 14, so it is byte-identical to what the worker produced —
 * in the stored batch's call order.
 */
/**
 * The invocation id of each concluded call of an outcome this module read (call id → row id):
 * the gateway names it in a result's `_meta` without reading the rows a second time
 * (docs/adr/0062). Beside the outcome, not in it: the steps route's wire shape stays as it is.
 */
const invocationIds = new WeakMap<StepOutcome, ReadonlyMap<string, string>>();

export function concludedInvocationIds(outcome: StepOutcome): ReadonlyMap<string, string> | undefined {
  return invocationIds.get(outcome);
}

export async function readStepOutcome(deps: Pick<ApiDeps, 'stores' | 'apiStores'>, run: RunRow, step: StepRow): Promise<StepOutcome> {
  const calls = fromStoredBatch(step.batch).batch?.calls ?? [];
  // The run, this step's rows and the breaker's tally through it, in one read (one statement:
  // migrations/0010, 0012).
  const view = await deps.apiStores.invocationQueries.stepView(run.tenantId, run.id, step.stepNumber);
  const reading = await readStep(
    deps.stores.approvals,
    run.tenantId,
    calls.map((c) => c.callId),
    view.rows,
  );
  const current = view.run ?? run;
  // The breaker as any worker would see it after this step: replayed from the rows' tally.
  const synthesisOnly = current.status !== 'failed' && replayBreaker(view.tally.groups, view.evidence).synthesisOnly();
  // § Control tools: a question and its run's WAITING_FOR_USER commit together (veetbot_suspend,
  // docs/adr/0034), so a suspended step is never read beside a run that still takes new steps.
  const outcome: StepOutcome = {
    step_number: step.stepNumber,
    status: reading.status,
    items: reading.concluded.map(renderToolResultItem),
    pending_approvals: reading.waiting.map((w) => ({ call_id: w.callId, invocation_id: w.row.id, approval_id: w.approvalId })),
    suspended: reading.suspended.map((s) => ({
      call_id: s.callId,
      invocation_id: s.row.id,
      kind: s.row.suspendedKind ?? 'user_input',
      ref: s.row.suspendedRef ?? s.row.id,
    })),
    synthesis_only: synthesisOnly,
    run_status: current.status,
  };
  invocationIds.set(outcome, new Map(reading.concluded.map((row) => [row.callId, row.id])));
  return outcome;
}

/** Wake the worker for a stored step; `fresh` when this request stored it just now. */
export interface StepStart {
  /** Absent when the step's own submission woke the workers in its commit (docs/adr/0076). */
  readonly wake?: () => Promise<void>;
  readonly fresh: boolean;
  /**
   * A wait armed before the submission (armStepWait): a submission that wakes the workers in its
   * own commit may be run and reported before the statement's answer is even read.
   */
  readonly armed?: ArmedStepWait;
}

/** A wait for a step's report, armed ahead of the statement that makes the report possible. */
export interface ArmedStepWait {
  /** Null when there is no wait (a wait of 0 seconds). */
  readonly done: Promise<void> | null;
  /** Stops listening (idempotent); the wait resolves. */
  release(): void;
}

/**
 * Arm the first wait for `step`'s report now, bounded as awaitStepOutcome bounds it and ended by
 * the request's or the server's stop. Call `release()` when it is not used (the submission
 * failed, or it was no fresh step).
 */
export function armStepWait(
  deps: Pick<ApiDeps, 'queue' | 'shutdownSignal'>,
  step: PendingStep,
  waitMs: number,
  pollMs: number,
  signal?: AbortSignal,
): ArmedStepWait {
  if (waitMs <= 0) return { done: null, release: () => undefined };
  const controller = new AbortController();
  const stop = () => controller.abort();
  signal?.addEventListener('abort', stop, { once: true });
  deps.shutdownSignal?.addEventListener('abort', stop, { once: true });
  if (signal?.aborted === true || deps.shutdownSignal?.aborted === true) controller.abort();
  const done = deps.queue.waitForStep(step, Math.min(waitMs, pollMs), controller.signal).finally(() => {
    signal?.removeEventListener('abort', stop);
    deps.shutdownSignal?.removeEventListener('abort', stop);
  });
  return { done, release: stop };
}

/**
 * Wait up to `waitMs` for the step to settle (every call terminal or waiting for approval).
 * The queue's wake-up is armed BEFORE each read (ports/step-queue.ts), so a worker finishing
 * between the read and the wait is never missed; `pollMs` bounds each wait so an approval
 * decided elsewhere, or a lost notification, costs at most that long.
 */
export async function awaitStepOutcome(
  deps: Pick<ApiDeps, 'stores' | 'apiStores' | 'queue' | 'clock' | 'shutdownSignal'>,
  run: RunRow,
  step: StepRow,
  waitMs: number,
  pollMs: number,
  signal?: AbortSignal,
  start?: StepStart,
): Promise<StepOutcome> {
  const pendingStep: PendingStep = { tenantId: run.tenantId, runId: run.id, stepNumber: step.stepNumber };
  const deadline = Date.now() + waitMs;
  if (start !== undefined) {
    // Armed before the worker is woken, so its report cannot come before the wait exists.
    try {
      await untilStopped(signal, deps.shutdownSignal, async (stop) => {
        const armed = start.armed;
        const wake =
          armed !== undefined ? armed.done : waitMs > 0 ? deps.queue.waitForStep(pendingStep, Math.min(waitMs, pollMs), stop) : null;
        if (armed !== undefined) stop.addEventListener('abort', () => armed.release(), { once: true });
        await start.wake?.();
        // A step stored by this very request has no outcome before the worker reports: the
        // first read waits for the report (or the poll bound) instead of reading at once.
        if (start.fresh && wake !== null) await wake;
      });
    } finally {
      start.armed?.release();
    }
  }
  for (;;) {
    const remaining = deadline - Date.now();
    const outcome = await untilStopped(signal, deps.shutdownSignal, async (stop) => {
      const stopped = signal?.aborted === true || deps.shutdownSignal?.aborted === true;
      const wake = remaining > 0 && !stopped ? deps.queue.waitForStep(pendingStep, Math.min(remaining, pollMs), stop) : null;
      const read = await readStepOutcome(deps, run, step);
      if (read.status !== 'running' || wake === null || stop.aborted) return read;
      await wake;
      return null;
    });
    if (outcome !== null) return outcome;
  }
}

/**
 * Run `fn` with a signal that aborts when the request or the server stops, and always at its
 * end (so a pending wait is released and no listener outlives the call).
 */
async function untilStopped<T>(
  request: AbortSignal | undefined,
  shutdown: AbortSignal | undefined,
  fn: (stop: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  request?.addEventListener('abort', stop, { once: true });
  shutdown?.addEventListener('abort', stop, { once: true });
  try {
    return await fn(controller.signal);
  } finally {
    controller.abort();
    request?.removeEventListener('abort', stop);
    shutdown?.removeEventListener('abort', stop);
  }
}
