import { idempotencyKey, isTerminalInvocationStatus, type ToolResultItem } from '@veetbot/domain';
import type { InvocationRow, NewInvocation, TerminalInvocationStatus } from '@veetbot/ports';
import type { DurableDeps, RunContext } from '../durable-deps';
import type { AuthorizedCall, RefusedCall } from '../pipeline-result';
import { concludeWithoutExecution, type Concluded } from '../render-item';
import { renderToolResultItem } from '../steps/step-14-render-outcome';
import { callIdentity, idempotencyKeyOf, intentRow } from '../steps/step-08-persist-intent';
import type { ToolCallRequest } from '../tool-call-request';
import { toolEvent } from '../tool-events';
import { holdsLiveLease } from './lease';
import { endRefusedAttempt } from './recovery-endings';
import { endWithoutResult } from './terminal-write';

/**
 * A call that ended before step 8 (denied, or invalid arguments) touched nothing, but it is
 * still a fact of the run: the audit trail, the breaker and a resubmitted batch all read it.
 * It is recorded as a terminal row under the same key derivation, so resubmitting the call
 * returns the recorded outcome. Arguments refused before step 5 are stored as received,
 * bounded and marked unvalidated (docs/adr/0020). The runtime's refusals of such calls (the
 * breaker, the budget, the deadline) are recorded through here too (recordRefusal), under the
 * same key.
 */
export async function recordConclusion(
  d: DurableDeps,
  now: Date,
  request: ToolCallRequest,
  run: RunContext,
  concluded: Concluded,
  known: RefusedCall,
): Promise<Concluded> {
  const tenantId = request.principal.tenant_id;
  const row = refusedRow(request, known, run, now);
  const existing = await insertProposed(d, tenantId, row, now);
  let recorded: InvocationRow;
  if (existing.inserted) {
    recorded = existing.row;
  } else {
    const found = existing.row;
    if (isTerminalInvocationStatus(found.status))
      return { kind: 'concluded', invocationStatus: found.status, item: renderToolResultItem(found) };
    // Only refusals insert PROPOSED rows: one left PROPOSED is a recorded conclusion whose
    // terminal write never committed (its worker was fenced out or died in between). Finish it
    // now, or it would stay PROPOSED for good.
    if (found.status !== 'proposed') return settleRefusedResubmission(d, now, request, run, concluded, found, row.idempotencyKey);
    recorded = found;
  }
  return endWithoutResult(
    d,
    tenantId,
    recorded,
    run,
    now,
    concluded.invocationStatus === 'denied' ? 'denied' : 'failed',
    concluded.item.outcome.reason_code,
    concluded.item.content,
  );
}

/** Why the runtime refuses a call before dispatch (§ The circuit breakers; docs/adr/0020). */
export interface Refusal {
  readonly status: Extract<TerminalInvocationStatus, 'denied' | 'failed'>;
  /**
   * policy.breaker.uncertain_repeat, tool.loop_detected, tool.run_cancelled (the breakers),
   * tool.budget_exhausted, run.deadline_exceeded (docs/adr/0020).
   */
  readonly reasonCode: string;
}

/** A call as the runtime's dry run of steps 1–7 left it: admitted, or refused by those steps. */
export type PlannedDispatch =
  | { readonly authorized: Pick<AuthorizedCall, 'spec' | 'argumentsHash' | 'arguments' | 'originTrust'> }
  | { readonly refused: RefusedCall };

/**
 * A call the runtime refuses before dispatch (§ The circuit breakers) never reaches the
 * pipeline, but it is a fact of the run: it is recorded as a terminal row under the key the
 * pipeline would derive for it, with tool.call.proposed and tool.call.denied/.failed, so the
 * audit trail shows it, the breaker replay counts it, and a resubmitted step returns the same
 * outcome (the pipeline's step 8 dedups to this row).
 *
 * - A call steps 1–7 admitted: its row is the one step 8 would write, but for the status.
 *   Returns null when the key is held by a RUNNING row: something may already have executed
 *   under it, and only the pipeline's recovery table may decide what it became.
 * - A call steps 1–7 themselves refuse (unknown tool, invalid arguments, a policy deny): the
 *   pipeline's own recordConclusion, under the key and with the (unvalidated) arguments the
 *   pipeline would record, so its row is the row the pipeline would have written but for the
 *   reason code.
 */
export async function recordRefusal(
  d: DurableDeps,
  now: Date,
  request: ToolCallRequest,
  call: PlannedDispatch,
  run: RunContext,
  refusal: Refusal,
): Promise<ToolResultItem | null> {
  if ('refused' in call) {
    const concluded = concludeWithoutExecution(request.callId, call.refused.toolName, refusal.reasonCode, refusal.status);
    return (await recordConclusion(d, now, request, run, concluded, call.refused)).item;
  }
  const tenantId = request.principal.tenant_id;
  const row = intentRow(request, call.authorized, run, idempotencyKeyOf(request, call.authorized), 'proposed', now);
  const inserted = await insertProposed(d, tenantId, row, now);
  const target = inserted.row;
  if (!inserted.inserted) {
    if (isTerminalInvocationStatus(target.status)) return renderToolResultItem(target);
    if (target.status === 'running') return null;
    // PROPOSED, AUTHORIZED or WAITING_FOR_APPROVAL from an earlier submission of this step:
    // nothing ran, and the breaker now forbids it from running.
  }
  return (await endWithoutResult(d, tenantId, target, run, now, refusal.status, refusal.reasonCode)).item;
}

/** Insert a refusal's PROPOSED row with tool.call.proposed; on a unique violation, the row that holds the key. */
async function insertProposed(
  d: Pick<DurableDeps, 'invocations'>,
  tenantId: string,
  row: NewInvocation & { readonly id: string },
  now: Date,
): Promise<{ readonly inserted: boolean; readonly row: InvocationRow }> {
  const inserted = await d.invocations.insertIntent(tenantId, row, [toolEvent('tool.call.proposed', { ...row, attemptNumber: 1 }, now)]);
  return inserted.inserted ? { inserted: true, row: inserted.row } : { inserted: false, row: inserted.existing };
}

/** The row a call refused at steps 1–7 is recorded as. */
function refusedRow(
  request: ToolCallRequest,
  known: RefusedCall,
  run: Pick<RunContext, 'parallelGroup'>,
  now: Date,
): NewInvocation & { readonly id: string; readonly idempotencyKey: string } {
  const toolVersion = known.spec?.version ?? 'unresolved';
  return {
    ...callIdentity(request),
    // The name of an unknown tool is model text: recorded (and rendered, and put in events)
    // only when it is a registry-grammar identifier (displayedToolName); the raw name is kept
    // in the unvalidated arguments record and is part of the hash.
    toolName: known.toolName,
    toolVersion,
    status: 'proposed',
    idempotencyKey: idempotencyKey({
      runId: request.runId,
      stepNumber: request.stepNumber,
      callId: request.callId,
      toolName: request.toolName,
      toolVersion,
      argumentsHash: known.argumentsHash,
    }),
    argumentsHash: known.argumentsHash,
    arguments: known.arguments,
    toolSource: known.spec?.source ?? 'builtin',
    serverId: known.spec?.server_id ?? null,
    // No tool ran and none ever will under this key; the most restrictive class is recorded.
    idempotencyClass: known.spec?.idempotency ?? 'non_idempotent',
    originTrust: known.originTrust,
    parallelGroup: run.parallelGroup,
    // docs/adr/0047: a call policy refused records the version and rule that refused it.
    policyVersion: known.decision?.policy_version ?? null,
    policyRuleId: known.decision?.rule_id ?? null,
    createdAt: now,
  };
}

/**
 * A call admitted earlier (AUTHORIZED, WAITING_FOR_APPROVAL, or RUNNING left by a dead worker)
 * whose resubmission steps 1–7 now refuse — a scope revoked, a policy that now denies. Recovery
 * re-checks authority once per attempt and never substitutes an old watermark for it, so the
 * call is not executed again; the row is settled instead (endRefusedAttempt) — but only by the
 * worker holding the run's live lease with the key not in flight here (the one lease rule,
 * lease.ts); anyone else answers ConcurrencyConflict.
 */
async function settleRefusedResubmission(
  d: DurableDeps,
  now: Date,
  request: ToolCallRequest,
  run: RunContext,
  concluded: Concluded,
  existing: InvocationRow,
  key: string,
): Promise<Concluded> {
  const tenantId = request.principal.tenant_id;
  const inFlightHere = d.inFlight.has(key);
  if (inFlightHere || !holdsLiveLease(await d.runs.get(tenantId, existing.runId), d.owner, run.fence, now)) {
    return concludeWithoutExecution(request.callId, existing.toolName, 'tool.concurrency_conflict', existing.status);
  }
  return endRefusedAttempt(d, tenantId, existing, run, now, concluded, concluded.item.content);
}
