import type { ToolResultItem } from '@veetbot/domain';
import {
  completeSuspended,
  endSuspended,
  everyCallConcluded,
  outcomeRowsByCall,
  isSuspended,
  renderToolResultItem,
  SUSPENSION_EVENT_TYPES,
  type Refusal,
} from '@veetbot/executor';
import type { InvocationRow, RunRow } from '@veetbot/ports';
import { withRunLease } from '../run-lease';
import { CONTROL_SPAN_NAMES, inControlSpan } from './control-spans';
import { fromStoredBatch } from '../stored-batch';
import { RuntimeError, runBusy, runNotFound } from '../runtime-errors';
import { pipelinesFor, type RuntimeCore } from '../runtime-core';
import { atWork } from '../run-teardown';
import { ANSWER_MAXIMUM_CHARACTERS, ASK_USER_SPEC, DELEGATE_RUN_SPEC } from './control-specs';

export interface AnsweredQuestion {
  readonly questionId: string;
  readonly runId: string;
  /** The conversation.ask_user call's item, now with the answer (USER trust). */
  readonly item: ToolResultItem;
  /** False when this answer was already recorded (an idempotent repeat). */
  readonly answeredNow: boolean;
}

/** The answer a completed ask_user row recorded (structured.answer), if any. */
function recordedAnswer(row: InvocationRow): string | undefined {
  const result = row.result as { structured?: { answer?: unknown } } | null;
  const answer = result?.structured?.answer;
  return typeof answer === 'string' ? answer : undefined;
}

/**
 * The resumption path of conversation.ask_user (§ Control tools): the answer completes the
 * suspended row — labelled USER (the tool's output_trust), through steps 11–13 — and the run,
 * once no other question waits, goes back from WAITING_FOR_USER to RUNNING; its agent submits
 * the next step. Idempotent on the question id: the same answer again answers what was
 * recorded; a different one is `question.already_answered` (409).
 */
export function answerQuestion(core: RuntimeCore, tenantId: string, questionId: string, answer: string): Promise<AnsweredQuestion> {
  return inControlSpan(CONTROL_SPAN_NAMES.answer, { 'veetbot.question_id': questionId }, () => answer_(core, tenantId, questionId, answer));
}

async function answer_(core: RuntimeCore, tenantId: string, questionId: string, answer: string): Promise<AnsweredQuestion> {
  if (answer.length === 0 || answer.length > ANSWER_MAXIMUM_CHARACTERS) {
    throw new RuntimeError('runtime.answer_invalid', `An answer is 1 to ${ANSWER_MAXIMUM_CHARACTERS} characters.`);
  }
  const { stores, clock } = core.deps;
  const row = await stores.invocations.getById(tenantId, questionId);
  if (row === null || row.toolName !== ASK_USER_SPEC.name) throw new RuntimeError('runtime.question_not_found', 'No such question.');
  if (!isSuspended(row)) return answeredBefore(row, answer);

  const held = await withRunLease(core.lease, tenantId, row.runId, async (h) => {
    const run = h.run;
    if (run.status === 'cancelled' || run.status === 'failed' || run.status === 'succeeded') {
      throw new RuntimeError('runtime.run_not_active', 'The run has ended; its question can no longer be answered.');
    }
    return atWork(core, tenantId, run.sessionId, async () => {
      const current = await stores.invocations.getById(tenantId, questionId);
      if (current === null || !isSuspended(current)) return { row: current ?? row, now: false };
      const pipeline = pipelinesFor(core, tenantId).pipeline;
      const value = {
        ok: true,
        content: [{ type: 'text' as const, text: answer }],
        structured: { question_id: questionId, answer },
        output_trust: 'user' as const,
      };
      const done = await completeSuspended(
        pipeline,
        tenantId,
        current,
        ASK_USER_SPEC,
        h,
        clock.now(),
        value,
        SUSPENSION_EVENT_TYPES.resumed,
      );
      await settleStep(core, tenantId, run.id, current.stepNumber);
      const stillWaiting = (await stores.invocations.listForRun(tenantId, run.id)).some(
        (r) => isSuspended(r) && r.suspendedKind === 'user_input',
      );
      if (!stillWaiting && run.status === 'waiting_for_user') await stores.runs.setStatus(tenantId, run.id, 'running', clock.now());
      return { row: done.row, now: true };
    });
  });
  if (!held.held) throw runBusy();
  if (!held.value.now) return answeredBefore(held.value.row, answer);
  return { questionId, runId: row.runId, item: renderToolResultItem(held.value.row), answeredNow: true };
}

function answeredBefore(row: InvocationRow, answer: string): AnsweredQuestion {
  const recorded = recordedAnswer(row);
  if (recorded !== answer) {
    throw new RuntimeError('runtime.question_answered', 'The question was already answered (or ended) differently.');
  }
  return { questionId: row.id, runId: row.runId, item: renderToolResultItem(row), answeredNow: false };
}

/** The step a resumed call belongs to is `completed` once every call of its batch has a terminal row. */
async function settleStep(core: RuntimeCore, tenantId: string, runId: string, stepNumber: number): Promise<void> {
  const { stores } = core.deps;
  const step = await stores.steps.get(tenantId, runId, stepNumber);
  if (step === null || step.status === 'completed') return;
  const calls = fromStoredBatch(step.batch).batch?.calls ?? [];
  const rows = outcomeRowsByCall(await stores.invocations.listForRun(tenantId, runId, { from: stepNumber, to: stepNumber }));
  if (
    everyCallConcluded(
      calls.map((c) => c.callId),
      rows,
    )
  )
    await stores.steps.setStatus(tenantId, runId, stepNumber, 'completed');
}

/** Rows of `parent` suspended on `childRunId`. */
async function waitingOn(core: RuntimeCore, parent: RunRow, childRunId: string): Promise<InvocationRow[]> {
  const rows = await core.deps.stores.invocations.listForRun(parent.tenantId, parent.id);
  return rows.filter((r) => isSuspended(r) && r.suspendedKind === 'child_run' && r.suspendedRef === childRunId);
}

/**
 * The join (§ Control tools; Section 26): a child run that ended completes its parent's
 * delegate.run row — its result as EXTERNAL_UNTRUSTED (a model produced it), a failed or
 * cancelled child as FAILED tool.upstream_error.child_run. Safe to repeat: a row already joined
 * is no longer suspended. Answers false when the parent's lease is held elsewhere (the caller
 * retries; POST /v1/runs/{child}/complete repeats the join).
 */
export async function joinParent(core: RuntimeCore, child: RunRow): Promise<boolean> {
  const parentRunId = child.parentRunId;
  if (parentRunId === null) return true;
  return inControlSpan(CONTROL_SPAN_NAMES.join, { 'veetbot.run_id': parentRunId, 'veetbot.child_run_id': child.id }, () =>
    join(core, child, parentRunId),
  );
}

async function join(core: RuntimeCore, child: RunRow, parentRunId: string): Promise<boolean> {
  if (child.status === 'running' || child.status === 'waiting_for_user') return true;
  const { stores, clock } = core.deps;
  const parent = await stores.runs.get(child.tenantId, parentRunId);
  // A cancelled parent ends its own suspended rows tool.run_cancelled (cancelRun).
  if (parent === null || parent.status === 'cancelled') return true;
  if ((await waitingOn(core, parent, child.id)).length === 0) return true;
  const held = await withRunLease(core.lease, child.tenantId, parent.id, (h) =>
    atWork(core, child.tenantId, parent.sessionId, async () => {
      const pipeline = pipelinesFor(core, child.tenantId).pipeline;
      for (const row of await waitingOn(core, parent, child.id)) {
        if (child.status === 'succeeded') {
          const value = {
            ok: true,
            content: [{ type: 'text' as const, text: child.result ?? '' }],
            structured: { child_run_id: child.id },
            output_trust: 'external_untrusted' as const,
          };
          await completeSuspended(
            pipeline,
            child.tenantId,
            row,
            DELEGATE_RUN_SPEC,
            h,
            clock.now(),
            value,
            SUSPENSION_EVENT_TYPES.childJoined,
          );
        } else {
          await endSuspended(
            pipeline.durable,
            child.tenantId,
            row,
            h,
            clock.now(),
            CHILD_ENDED.reasonCode,
            SUSPENSION_EVENT_TYPES.childJoined,
          );
        }
        await settleStep(core, child.tenantId, parent.id, row.stepNumber);
      }
    }),
  );
  return held.held;
}

const CHILD_ENDED: Refusal = { status: 'failed', reasonCode: 'tool.upstream_error.child_run' };

/** Join with a few short retries: a parent step being resubmitted holds the lease briefly. */
export async function joinParentSoon(core: RuntimeCore, child: RunRow): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    if (await joinParent(core, child)) return;
    await new Promise((resolve) => setTimeout(resolve, 50 * (attempt + 1)));
  }
}

/**
 * A run's agent completes it with its final answer (POST /v1/runs/{id}/complete): RUNNING →
 * SUCCEEDED. A child run then joins its parent. Completing again with the same answer repeats
 * only the join; a run that is not running (ended, cancelled, waiting for its user) is refused.
 */
export async function completeRun(core: RuntimeCore, tenantId: string, runId: string, result: string): Promise<RunRow> {
  const { stores, clock } = core.deps;
  const completed = await stores.runs.complete(tenantId, runId, result, clock.now());
  const run = completed ?? (await stores.runs.get(tenantId, runId));
  if (run === null) throw runNotFound();
  if (completed === null && !(run.status === 'succeeded' && run.result === result)) {
    throw new RuntimeError('runtime.run_not_active', `The run is ${run.status}; only a running run can be completed.`);
  }
  await joinParentSoon(core, run);
  return run;
}
