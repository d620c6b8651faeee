import {
  isTerminalInvocationStatus,
  runWithConcurrencyCap,
  StepSubmission,
  type BatchBudget,
  type BreakerCounter,
  type BreakerVerdict,
  type RunFailureReason,
  type SuspendedKind,
  type ToolResultItem,
} from '@veetbot/domain';
import { checkJsonValue, describeJsonPath, STEP_BATCH_MAX_DEPTH } from '@veetbot/domain';
import {
  executeToolCall,
  outcomeRowsByCall,
  recordRefusal,
  runLeavesTimeForCall,
  type PipelineResult,
  type Refusal,
  type RunContext,
  type SessionView,
} from '@veetbot/executor';
import type { InvocationRow, PendingStep, StepContext, StepOpening, StepRow } from '@veetbot/ports';
import { admitPlannedBatch, planCalls, type PlannedCall } from './batch-plan';
import { BreakerLedger } from './held-tallies';
import { requestOf } from './request-of';
import { readBudgets } from './run-budgets';
import { withAcquiredLease, type OwnedRun } from './run-lease';
import { RuntimeError, runBusy, runNotFound, sessionNotFound } from './runtime-errors';
import { pipelinesFor, type RuntimeCore } from './runtime-core';
import { atWork, runEnded, tearDown } from './run-teardown';
import { ensureSessionTools } from './session-tools';
import type { StepOutcome } from './step-submission';
import { checkResubmission, fromStoredBatch, type StoredStepBatch, storedTraceContext, toStoredBatch } from './stored-batch';
import { type StoredTraceContext, withStepSpan } from './step-trace';
import { joinParent, joinParentSoon } from './control/resume';
import { chargedRows } from './orchestration/orchestration-host';
import { ORCHESTRATION_TOOL_NAME } from './orchestration/orchestration-spec';

/** The submission checked; its stored form (what steps.batch will hold) is returned, built once. */
function validate(submission: StepSubmission): StoredStepBatch {
  const parsed = StepSubmission.safeParse(submission);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RuntimeError(
      'runtime.step_invalid',
      `The step submission is invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? ''}`,
    );
  }
  // ADR 0019: the batch is stored before any call runs, so what no store can hold (NUL, lone
  // surrogates) or no walk may recurse into (nesting) is refused here, as the api refuses the
  // same body — never a store error half-way through the step.
  const stored = toStoredBatch(submission);
  const refused = checkJsonValue(stored, { maxDepth: STEP_BATCH_MAX_DEPTH, canonicalNumbers: true });
  if (refused !== null) {
    const at = refused.path.length === 0 ? '(root)' : describeJsonPath(refused.path);
    throw new RuntimeError('runtime.step_invalid', `The step submission is invalid at ${at}: ${refused.message}.`);
  }
  // § Parallel calls: call ids distinguish the calls of one step inside the key.
  const ids = new Set(submission.calls.map((c) => c.callId));
  if (ids.size !== submission.calls.length) throw new RuntimeError('runtime.step_invalid', 'Call ids must be unique within a step.');
  if (submission.principal.tenant_id !== submission.tenantId) {
    throw new RuntimeError('runtime.principal_mismatch', 'The principal belongs to another tenant.');
  }
  return stored;
}

/** A call's disposition in this submission. */
type CallResult =
  | { readonly kind: 'concluded'; readonly item: ToolResultItem; readonly evidenceKey: string | null }
  | { readonly kind: 'approval_required'; readonly invocationId: string | undefined }
  | { readonly kind: 'suspended'; readonly invocationId: string; readonly suspendedKind: SuspendedKind; readonly suspendedRef: string };

/**
 * Run one model step's batch (§ Parallel calls, and what a step actually is): under the run's
 * lease, every call through the one pipeline, with the circuit breakers before and after. The
 * step's own bookkeeping is two statements around its calls (docs/adr/0049): the opening (run,
 * session, lease, step row, breaker tallies) and the finish (step completed, run failed, lease
 * released), with the step's rows read between.
 */
export async function submitStep(
  core: RuntimeCore,
  submission: StepSubmission,
  stored?: StepContext,
  options: SubmitOptions = {},
  rejoin = true,
): Promise<StepOutcome> {
  const batch = validate(submission);
  // A worker's step is stored already (it claimed it): the opening reads it instead of storing one.
  const known = stored !== undefined && sameStep(stored.step, submission);
  const ran = await openAndRun(core, submission, known ? null : batch, () => submission, options);
  // Unreachable: this submission is never passed over (only a queued step's can be).
  if ('passed' in ran) throw runNotFound();
  return afterStep(core, ran.ran, options, rejoin);
}

/** What became of a step taken from the queue (submitQueuedStep). */
export type QueuedStepResult =
  /** `traceContext`: the api request's, stored with the step (docs/adr/0068), for the worker's log. */
  | { readonly kind: 'ran'; readonly outcome: StepOutcome; readonly traceContext: StoredTraceContext | null }
  /** Completed since the claim (another worker got there first): nothing to do. */
  | { readonly kind: 'completed' }
  /** The stored batch is not one this version wrote: reported, never run. */
  | { readonly kind: 'unreadable'; readonly error: Error };

/**
 * A step the api stored and a worker claimed (the step queue): opened by its identity alone —
 * the opening reads the stored step with the run and session (docs/adr/0049), so the worker reads
 * nothing before it — then run as if it had been submitted in-process.
 */
export async function submitQueuedStep(core: RuntimeCore, step: PendingStep, options: SubmitOptions = {}): Promise<QueuedStepResult> {
  const ran = await openAndRun(
    core,
    step,
    null,
    (stored) => {
      if (stored.status === 'completed') return { kind: 'completed' };
      const read = fromStoredBatch(stored.batch);
      if (read.batch === null) return { kind: 'unreadable', error: read.error };
      const submission: StepSubmission = { tenantId: step.tenantId, runId: step.runId, stepNumber: step.stepNumber, ...read.batch };
      validate(submission);
      return submission;
    },
    options,
  );
  if ('passed' in ran) return ran.passed;
  return { kind: 'ran', outcome: await afterStep(core, ran.ran, options, true), traceContext: ran.ran.traceContext };
}

type Passed = Exclude<QueuedStepResult, { kind: 'ran' }>;
interface StepRan {
  readonly submission: StepSubmission;
  readonly outcome: StepOutcome;
  readonly ended: boolean;
  readonly sessionId: string;
  readonly traceContext: StoredTraceContext | null;
}

/**
 * The step's opening, under the lease the opening took, then its calls and its finish.
 * `batch` null: the step is stored (a worker's), and `submissionOf` says from the stored row what
 * to run — or why it is passed over, the lease then let go untouched.
 */
async function openAndRun(
  core: RuntimeCore,
  ref: PendingStep,
  batch: StoredStepBatch | null,
  submissionOf: (stored: StepRow) => StepSubmission | Passed,
  options: SubmitOptions,
): Promise<{ readonly ran: StepRan } | { readonly passed: Passed }> {
  const { stores, clock } = core.deps;
  const { tenantId, runId, stepNumber } = ref;
  const held = await withAcquiredLease(
    core.lease,
    tenantId,
    runId,
    async () => {
      const now = clock.now();
      const tally = core.tallies.get(tenantId, runId);
      const opening = await stores.steps.open(tenantId, {
        runId,
        stepNumber,
        batch,
        createdAt: now,
        owner: core.lease.owner,
        leaseExpiresAt: new Date(now.getTime() + core.lease.ttlMs),
        now,
        tallyHeld: tally === undefined ? undefined : { fencingToken: tally.fencingToken, throughStep: tally.throughStep },
      });
      if (opening.kind !== 'opened') return { refused: opening };
      // The earlier steps' breaker ledger: as the opening read it, or the one this process holds
      // (taken here, so another run's eviction cannot take it from under the step).
      const ledger = opening.earlier !== null ? BreakerLedger.of(opening.earlier.groups, opening.evidence) : tally?.ledger;
      if (ledger === undefined) throw new Error('The opening skipped the tally without one held: the store broke its contract.');
      return { acquired: { ...opening, fencingToken: opening.run.fencingToken, ledger } };
    },
    async (h, opened): Promise<{ readonly ran: StepRan } | { readonly passed: Passed }> => {
      const submission = submissionOf(opened.step);
      if ('kind' in submission) return { passed: submission };
      // docs/adr/0068: the calls run under `step.run`, in the api request's trace when the step was stored by one.
      const traced = batch === null ? storedTraceContext(opened.step.batch) : null;
      const outcome = await withStepSpan(ref, traced, () =>
        atWork(core, tenantId, opened.session.id, () => runStep(core, submission, h, opened, batch === null, options)),
      );
      return { ran: { submission, outcome, ended: runEnded(h.signal), sessionId: opened.session.id, traceContext: traced } };
    },
  );
  if (held.held) return held.value;
  return refuse(core, ref, held.refused);
}

async function afterStep(core: RuntimeCore, ran: StepRan, options: SubmitOptions, rejoin: boolean): Promise<StepOutcome> {
  const { outcome, ended, sessionId, submission } = ran;
  const { tenantId } = submission;
  // § MCP: run teardown — the run failed, was cancelled or ended under this step, or it
  // suspended (a call waits for an approval) — releases the session's transports promptly.
  if (ended || outcome.runFailed !== null || outcome.pendingApprovals.length > 0 || outcome.suspended.length > 0) {
    await tearDown(core, tenantId, sessionId);
  }
  // § Control tools: a delegated child that has ended but whose join never ran (its process
  // died between the child's end and the join) is joined here, when the parent's agent asks
  // for the step again; the step is then read once more, now with the child's result.
  if (rejoin && (await joinEndedChildren(core, tenantId, outcome))) return submitStep(core, submission, undefined, options, false);
  return outcome;
}

/**
 * Why a step was not opened, as the runtime's refusal — in the order the checks run: the run,
 * its session, the lease. `null`: this process is at work on the run already (ActiveRuns), so
 * the run and session are read to refuse what is not active before saying busy.
 */
async function refuse(core: RuntimeCore, ref: PendingStep, refused: Exclude<StepOpening, { kind: 'opened' }> | null): Promise<never> {
  const { tenantId } = ref;
  let why = refused;
  if (why === null) {
    const run = await core.deps.stores.runs.get(tenantId, ref.runId);
    const session = run === null ? null : await core.deps.stores.sessions.get(tenantId, run.sessionId);
    why =
      run === null
        ? { kind: 'run_not_found' }
        : run.status !== 'running' && run.status !== 'waiting_for_user'
          ? { kind: 'run_not_active', run }
          : session === null
            ? { kind: 'session_not_found', run }
            : session.status !== 'open'
              ? { kind: 'session_closed', run, session }
              : { kind: 'busy' };
  }
  switch (why.kind) {
    case 'run_not_found':
    case 'step_not_found':
      throw runNotFound();
    case 'run_not_active':
      // The run ended (or was cancelled) while this process held the session's transports.
      await tearDown(core, tenantId, why.run.sessionId);
      throw notActive();
    case 'session_not_found':
      throw sessionNotFound();
    case 'session_closed':
      await tearDown(core, tenantId, why.run.sessionId);
      throw new RuntimeError('runtime.session_closed', 'The session is closed.');
    case 'busy':
      throw runBusy();
    case 'over_quota':
      throw new RuntimeError('runtime.tenant_over_quota', 'The tenant runs as many steps as its quota allows; the step stays pending.');
    case 'waiting_for_user':
      // § Control tools: while the run waits for its user, only a resubmitted step is accepted —
      // it answers what was recorded (the question is never asked twice); a new step waits.
      throw new RuntimeError('runtime.run_waiting_for_user', 'The run is waiting for its user to answer a question.');
  }
}

async function joinEndedChildren(core: RuntimeCore, tenantId: string, outcome: StepOutcome): Promise<boolean> {
  let joined = false;
  for (const waiting of outcome.suspended) {
    if (waiting.kind !== 'child_run') continue;
    const child = await core.deps.stores.runs.get(tenantId, waiting.ref);
    if (child === null || child.status === 'running' || child.status === 'waiting_for_user') continue;
    if (await joinParent(core, child)) joined = true;
  }
  return joined;
}

function notActive(): RuntimeError {
  return new RuntimeError('runtime.run_not_active', 'The run is not running.');
}

function sameStep(step: StepRow, submission: StepSubmission): boolean {
  return step.tenantId === submission.tenantId && step.runId === submission.runId && step.stepNumber === submission.stepNumber;
}

/** An opened step, with the breaker ledger of the steps before it. */
type Opened = Extract<StepOpening, { kind: 'opened' }> & { readonly ledger: BreakerLedger };

export interface SubmitOptions {
  /**
   * The step came from the step queue (the worker loop): its finish sends the queue's done
   * notification in its own commit (StepFinish.notifyDone), so a step that returns has told
   * the api's wait already.
   */
  readonly notifyDone?: boolean;
}

async function runStep(
  core: RuntimeCore,
  submission: StepSubmission,
  held: OwnedRun,
  opened: Opened,
  known: boolean,
  options: SubmitOptions,
): Promise<StepOutcome> {
  const { stores, clock } = core.deps;
  const { tenantId, runId, stepNumber } = submission;
  // As the opening left it, under the run's row lock: running or waiting for its user.
  const { run, session } = opened;
  // UNIQUE(run_id, step_number): a resubmitted step is not an error — its batch runs through
  // the pipeline again and every call dedups to its recorded outcome; a different batch under
  // the same step number is refused (checkResubmission, stored-batch.ts). The stored step a
  // worker built this submission from needs no check.
  const stepRow = known || opened.inserted ? opened.step : checkResubmission(opened.step, submission);
  if (stepRow.status === 'pending') await stores.steps.setStatus(tenantId, runId, stepNumber, 'running');

  // The run's workspace folder (created and checked on disk) is made ready while steps 1–7 plan
  // the batch: the two run side by side, and the run has been opened, so no folder is made for
  // a step the opening refused. Awaited below, where the calls need it.
  const workspaceReady = core.deps.workspaces.forRun(tenantId, runId);
  workspaceReady.catch(() => undefined);
  const view = core.views.of(session);
  const tenant = pipelinesFor(core, tenantId);
  await ensureSessionTools(core, tenant.registry, session, submission.principal, core.preparedSessions);
  const identity = { tenantId, sessionId: run.sessionId, runId, stepNumber, principal: submission.principal };
  const planned = await planCalls(
    tenant.preview,
    view,
    submission.calls.map((c) => requestOf(identity, c)),
  );

  // The breaker as any worker would see it: replayed from the earlier steps' rows, counted
  // by the store (breaker-replay.ts) or held by this process since its last step of the run
  // (held-tallies.ts). This step's own rows are left out, so a resubmitted step is counted
  // once — and decides exactly what its first submission decided.
  const { ledger } = opened;
  const replayed = ledger.counter(planned.map((c) => c.identity));
  const breaker = replayed.counter;
  // § Answer before the limit (ADR-0136): the batch before this one left a count one below its
  // threshold, so this turn is synthesis-only — any tool it returns fails with
  // ToolLoopDetected before dispatch, whatever tool it names.
  const synthesisTurn = breaker.synthesisOnly();

  // BEFORE dispatch: every call is counted, in provider order — admitted ones and those steps
  // 1–7 will refuse alike, each under the key its row will carry.
  const verdicts = planned.map((c) => breaker.check(c.identity));
  // "The existing hard breaker still rejects a batch that already reaches the threshold."
  const loopBeforeDispatch = synthesisTurn || verdicts.some((v) => v.verdict === 'loop_detected');

  // § The admission check: "the remaining tool ... budget". Every call of the run spends one
  // tool call, whatever its outcome (each has its row); a call past the budget is refused
  // before dispatch (docs/adr/0020). The run's lease serializes steps, so two steps cannot
  // both spend the last call. Step numbers need not arrive in order, so the calls of later-
  // numbered steps are spent too (read only when there is a budget to spend).
  // § Budget accounting (ADR-0015 point 3; docs/adr/0039): an orchestration's own row is
  // refunded — never charged, never refused for the budget; its bridge calls are charged, each
  // on its row, and capped per turn at what the budget has left.
  // The delegation tree shares the budget (docs/adr/0050): the run's children are charged their
  // allowance while they run and what they spent once they end, read by the opening.
  const { maximumToolCalls } = readBudgets(run.budgets);
  const spent =
    maximumToolCalls === undefined
      ? ledger.charged
      : ledger.charged +
        chargedRows((opened.later ?? (await stores.invocations.breakerTally(tenantId, runId, { from: stepNumber + 1 }))).groups) +
        (opened.delegated ?? (await stores.runs.delegatedCalls(tenantId, runId)));
  const refunded = (index: number): boolean => planned[index]?.request.toolName === ORCHESTRATION_TOOL_NAME;
  const chargedBefore = (index: number): number => planned.filter((c) => c.index < index && !refunded(c.index)).length;
  const withinBudget = (index: number): boolean =>
    maximumToolCalls === undefined || refunded(index) || spent + chargedBefore(index) < maximumToolCalls;
  const budget = batchBudget(maximumToolCalls, spent, run.deadlineAt, clock.now());
  const refusals = planned.map((c) => breakerRefusal(verdicts[c.index]!, synthesisTurn, loopBeforeDispatch));
  const refusesAny = refusals.some((r) => r !== null) || planned.some((c) => !withinBudget(c.index));
  const mode = refusesAny ? 'sequential' : admitPlannedBatch(planned, view, tenant.registry, budget);

  const workspace = await workspaceReady;
  const context: RunContext = {
    fence: held.fence,
    deadlineAt: run.deadlineAt,
    ...(submission.callerTimeoutSeconds === undefined ? {} : { callerTimeoutSeconds: submission.callerTimeoutSeconds }),
    // § The admission check: one parallel_group for the whole batch; none when sequential.
    parallelGroup: mode === 'parallel' ? globalThis.crypto.randomUUID() : null,
    workspace,
    signal: held.signal,
  };

  let afterDeadline = false;
  const dispatch = async (call: PlannedCall): Promise<CallResult> => {
    // A call made once the run's deadline has passed — or so close to it that the call cannot
    // finish (the executor's one rule, docs/adr/0025) — is not a timeout of that call: the run
    // is over (docs/adr/0020). Checked at each call's dispatch, so a sequential batch that
    // outlives the deadline stops there. The breakers' refusals come first, the budget last.
    const pastDeadline = !runLeavesTimeForCall(run, clock.now(), pipelinesFor(core, tenantId).pipeline.durable?.minimumCallSeconds);
    const refusal = refusals[call.index] ?? (pastDeadline ? DEADLINE_EXCEEDED : withinBudget(call.index) ? null : BUDGET_EXHAUSTED);
    if (refusal === DEADLINE_EXCEEDED) afterDeadline = true;
    const result = await dispatchCall(core, view, call, refusal, context);
    // The executor asks the same question again as step 10 begins; its refusal ends the run too.
    if (result.kind === 'concluded' && result.item.outcome.reason_code === DEADLINE_EXCEEDED.reasonCode) afterDeadline = true;
    return result;
  };
  const results =
    mode === 'parallel'
      ? await dispatchParallel(planned, dispatch, core.settings.batchConcurrency)
      : await dispatchSequential(planned, dispatch);

  // AFTER: the rows are the facts; the breaker records what they say. The finish reads them
  // and writes the step's end in one statement (docs/adr/0049), so the run's failure must be
  // known before it: the hard breaker and the deadline are; three identical denials can only
  // trip on a denial, so a step that drew one reads its rows first and fails the run under the
  // lease, with its finish.
  const callIds = planned.map((c) => c.request.callId);
  const drewDenial = results.some((r) => r.kind === 'concluded' && r.item.outcome.status === 'denied');
  const recorded = (rows: readonly InvocationRow[]): { stepRows: ReadonlyMap<string, InvocationRow>; policyDenied: boolean } => {
    const byCall = outcomeRowsByCall(rows);
    for (const row of byCall.values()) replayed.include({ name: row.toolName, argumentsHash: row.argumentsHash });
    return { stepRows: byCall, ...recordOutcomes(breaker, planned, byCall) };
  };
  const early =
    drewDenial && !loopBeforeDispatch
      ? recorded(await stores.invocations.listForRun(tenantId, runId, { from: stepNumber, to: stepNumber }))
      : null;
  const failedBefore = runFailure(loopBeforeDispatch, early?.policyDenied ?? false, afterDeadline);
  // § New evidence: a success's key restarts its call's count; applied before the finish so the
  // run's evidence after this step goes with it, under the lease (docs/adr/0078).
  recordEvidence(breaker, planned, results);
  const breakerEvidence = ledger.evidenceAfter(breaker);
  const finished = await stores.steps.finish(tenantId, {
    runId,
    stepNumber,
    fencingToken: held.fence.fencingToken,
    callIds,
    failReason: failedBefore === null ? null : RUN_FAILURE_REASON[failedBefore],
    at: clock.now(),
    ...(options.notifyDone === true ? { notifyDone: true } : {}),
    ...(breakerEvidence === null ? {} : { breakerEvidence }),
  });
  held.released();
  const { stepRows, policyDenied } = early ?? recorded(finished.rows);
  // Only if a row says denied where no result did (never expected: each concluded result is its
  // row): the breaker still fails the run, now after the lease.
  let runFailed = failedBefore;
  let failedRun = finished.failed;
  if (runFailed === null && policyDenied) {
    runFailed = 'tool_policy_denied';
    const current = await stores.runs.get(tenantId, runId);
    if (current?.status === 'running')
      failedRun = await stores.runs.setStatus(tenantId, runId, 'failed', clock.now(), RUN_FAILURE_REASON[runFailed]);
  }
  // Kept only when the finish let go of the lease it held: the token then names exactly these rows
  // (and the evidence the finish wrote with the release).
  if (finished.released && breakerEvidence !== null) ledger.setEvidence(breakerEvidence);
  if (finished.released) core.tallies.keep(tenantId, runId, { fencingToken: held.fence.fencingToken, stepNumber }, ledger, finished.rows);
  else core.tallies.forget(tenantId, runId);
  // A failed child ends its parent's delegate.run call (control/resume.ts).
  if (failedRun?.parentRunId) void joinParentSoon(core, failedRun).catch(() => undefined);

  const items: ToolResultItem[] = [];
  const pendingApprovals: StepOutcome['pendingApprovals'][number][] = [];
  const suspended: StepOutcome['suspended'][number][] = [];
  for (const [index, result] of results.entries()) {
    const callId = planned[index]!.request.callId;
    if (result.kind === 'concluded') items.push(result.item);
    else if (result.kind === 'suspended')
      suspended.push({ callId, invocationId: result.invocationId, kind: result.suspendedKind, ref: result.suspendedRef });
    else pendingApprovals.push({ callId, invocationId: result.invocationId ?? stepRows.get(callId)?.id ?? '' });
  }
  // § Control tools: a question moved the run to WAITING_FOR_USER in the commit that suspended
  // it (veetbot_suspend); the lease goes when this step lets go of it, the answer moves it back.
  return { stepNumber, items, pendingApprovals, suspended, mode, synthesisOnly: runFailed === null && breaker.synthesisOnly(), runFailed };
}

/** Why the run fails after this step, most serious first (docs/adr/0020); null: it does not. */
function runFailure(loopBeforeDispatch: boolean, policyDenied: boolean, afterDeadline: boolean): StepOutcome['runFailed'] {
  if (loopBeforeDispatch) return 'tool_loop_detected';
  if (policyDenied) return 'tool_policy_denied';
  return afterDeadline ? 'deadline_exceeded' : null;
}

function batchBudget(maximumToolCalls: number | undefined, callsSoFar: number, deadlineAt: Date, now: Date): BatchBudget {
  return {
    remainingToolCalls: maximumToolCalls === undefined ? Number.POSITIVE_INFINITY : Math.max(0, maximumToolCalls - callsSoFar),
    remainingSeconds: (deadlineAt.getTime() - now.getTime()) / 1000,
  };
}

const DEADLINE_EXCEEDED: Refusal = { status: 'failed', reasonCode: 'run.deadline_exceeded' };
const BUDGET_EXHAUSTED: Refusal = { status: 'failed', reasonCode: 'tool.budget_exhausted' };

/** How the run row says why it failed (docs/adr/0020): each a reason code of the table. */
const RUN_FAILURE_REASON = {
  tool_loop_detected: 'tool.loop_detected',
  tool_policy_denied: 'policy.breaker.repeated_denial',
  deadline_exceeded: 'run.deadline_exceeded',
} as const satisfies Record<NonNullable<StepOutcome['runFailed']>, RunFailureReason>;

/** The circuit breakers' refusal of a call before dispatch, if any, most serious first. */
function breakerRefusal(verdict: BreakerVerdict, synthesisTurn: boolean, loopBeforeDispatch: boolean): Refusal | null {
  // The uncertain row is a safety rule and is checked first (§ The circuit breakers).
  if (verdict.verdict === 'uncertain_repeat') return { status: 'denied', reasonCode: 'policy.breaker.uncertain_repeat' };
  // The synthesis-only turn: "any tool returned during that turn fails with ToolLoopDetected".
  if (verdict.verdict === 'loop_detected' || synthesisTurn) return { status: 'failed', reasonCode: 'tool.loop_detected' };
  // A batch the hard breaker rejects runs none of its calls; the run is stopping.
  if (loopBeforeDispatch) return { status: 'failed', reasonCode: 'tool.run_cancelled' };
  return null;
}

async function dispatchCall(
  core: RuntimeCore,
  view: SessionView,
  call: PlannedCall,
  refusal: Refusal | null,
  context: RunContext,
): Promise<CallResult> {
  if (refusal !== null) {
    const planned = call.authorized !== null ? { authorized: call.authorized } : call.refused !== null ? { refused: call.refused } : null;
    if (planned !== null) {
      const durable = pipelinesFor(core, call.request.tenantId).pipeline.durable;
      const item = await recordRefusal(durable, core.deps.clock.now(), call.request, planned, context, refusal);
      // null: a RUNNING row holds the key; only the pipeline's recovery table may settle it.
      if (item !== null) return { kind: 'concluded', item, evidenceKey: null };
    }
  }
  return fromPipeline(
    await executeToolCall(pipelinesFor(core, call.request.tenantId).pipeline, view, call.request, {
      dryRun: false,
      run: context,
      planned: call.preview,
    }),
  );
}

function fromPipeline(result: PipelineResult): CallResult {
  switch (result.kind) {
    case 'concluded':
      return { kind: 'concluded', item: result.item, evidenceKey: result.evidenceKey ?? null };
    case 'approval_required':
      return { kind: 'approval_required', invocationId: result.invocationId };
    case 'suspended':
      return {
        kind: 'suspended',
        invocationId: result.invocationId,
        suspendedKind: result.suspendedKind,
        suspendedRef: result.suspendedRef,
      };
    case 'authorized':
      // Only a dry run answers `authorized`; a durable run always executes or concludes.
      throw new Error('The durable pipeline answered as a dry run.');
  }
}

/**
 * § Parallel calls: at most `cap` in flight, the rest queue. A call that raises does not cancel
 * its siblings; once all have settled, an infrastructure failure (the store, a lost lease) is
 * rethrown and the step stays open — resubmitting it returns what was recorded.
 */
async function dispatchParallel(
  planned: readonly PlannedCall[],
  dispatch: (c: PlannedCall) => Promise<CallResult>,
  cap: number,
): Promise<CallResult[]> {
  const settled = await runWithConcurrencyCap(
    planned.map((c) => () => dispatch(c)),
    cap,
  );
  const results: CallResult[] = [];
  for (const outcome of settled) {
    if (outcome.status === 'rejected') throw outcome.reason;
    results.push(outcome.value);
  }
  return results;
}

/** In the order the provider emitted the calls; a failure stops the batch where it happened. */
async function dispatchSequential(
  planned: readonly PlannedCall[],
  dispatch: (c: PlannedCall) => Promise<CallResult>,
): Promise<CallResult[]> {
  const results: CallResult[] = [];
  for (const call of planned) results.push(await dispatch(call));
  return results;
}

/**
 * § New evidence, in provider order: each success whose result carries an evidence key is
 * recorded with it (a key different from the call's last restarts its count). Only the success
 * part of a record: recordOutcomes records every outcome afterwards, without the keys.
 */
function recordEvidence(breaker: BreakerCounter, planned: readonly PlannedCall[], results: readonly CallResult[]): void {
  for (const call of planned) {
    const result = results[call.index];
    if (result?.kind !== 'concluded' || result.evidenceKey === null || result.item.outcome.status !== 'succeeded') continue;
    breaker.record({
      ...call.identity,
      outcomeStatus: 'succeeded',
      reasonCode: result.item.outcome.reason_code,
      evidenceKey: result.evidenceKey,
    });
  }
}

/**
 * AFTER the batch, from the rows: each terminal outcome is recorded (three identical denials
 * trip ToolPolicyDenied). Every call was already counted before dispatch under the key its
 * row carries, so live counting and the replay agree.
 */
function recordOutcomes(
  breaker: BreakerCounter,
  planned: readonly PlannedCall[],
  stepRows: ReadonlyMap<string, InvocationRow>,
): { policyDenied: boolean } {
  let policyDenied = false;
  for (const call of planned) {
    const row = stepRows.get(call.request.callId);
    if (row === undefined) continue;
    const identity = { name: row.toolName, argumentsHash: row.argumentsHash };
    if (!isTerminalInvocationStatus(row.status) || row.outcomeStatus === null || row.reasonCode === null) continue;
    // The evidence keys were applied before the finish (recordEvidence).
    if (
      breaker.record({ ...identity, outcomeStatus: row.outcomeStatus, reasonCode: row.reasonCode, evidenceKey: null }).tripped ===
      'policy_denied'
    ) {
      policyDenied = true;
    }
  }
  return { policyDenied };
}
