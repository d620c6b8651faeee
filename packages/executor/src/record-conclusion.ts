import { idempotencyKey, isTerminalInvocationStatus } from '@veetbot/domain';
import type { InvocationRow } from '@veetbot/ports';
import type { DurableDeps, RunContext } from './durable-deps';
import type { Concluded } from './render-item';
import type { RefusedCall } from './pipeline-result';
import type { ToolCallRequest } from './tool-call-request';
import { toolEvent } from './tool-events';
import { renderToolResultItem } from './steps/step-14-render-outcome';
import { completeWithoutExecution, writeTerminal } from './steps/terminal-write';
import { concludeWithoutExecution } from './render-item';

/**
 * A call that ended before step 8 (denied, or invalid arguments) touched nothing, but it is
 * still a fact of the run: the audit trail, the breaker and a resubmitted batch all read it.
 * It is recorded as a terminal row under the same key derivation, so resubmitting the call
 * returns the recorded outcome. Arguments refused before step 5 are stored as received,
 * bounded and marked unvalidated (docs/adr/0020). The runtime records its own refusals of such
 * calls (the breaker, the budget, the deadline) through here too, under the same key.
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
  const argumentsHash = known.argumentsHash;
  const key = idempotencyKey({
    runId: request.runId,
    stepNumber: request.stepNumber,
    callId: request.callId,
    toolName: request.toolName,
    toolVersion: known.spec?.version ?? 'unresolved',
    argumentsHash,
  });
  const id = globalThis.crypto.randomUUID();
  const row = {
    id,
    runId: request.runId,
    sessionId: request.sessionId,
    stepNumber: request.stepNumber,
    callId: request.callId,
    // The name of an unknown tool is model text: recorded (and rendered, and put in events)
    // only when it is a registry-grammar identifier (displayedToolName); the raw name is kept
    // in the unvalidated arguments record and is part of the hash.
    toolName: known.toolName,
    toolVersion: known.spec?.version ?? 'unresolved',
    status: 'proposed' as const,
    idempotencyKey: key,
    argumentsHash,
    arguments: known.arguments,
    toolSource: known.spec?.source ?? 'builtin',
    serverId: known.spec?.server_id ?? null,
    // No tool ran and none ever will under this key; the most restrictive class is recorded.
    idempotencyClass: known.spec?.idempotency ?? 'non_idempotent',
    originTrust: known.originTrust,
    parallelGroup: run.parallelGroup,
    createdAt: now,
  };
  const inserted = await d.invocations.insertIntent(tenantId, row, [toolEvent('tool.call.proposed', { ...row, attemptNumber: 1 }, now)]);
  let recorded = inserted.inserted ? inserted.row : inserted.existing;
  if (!inserted.inserted) {
    const existing = inserted.existing;
    if (isTerminalInvocationStatus(existing.status)) return { kind: 'concluded', invocationStatus: existing.status, item: renderToolResultItem(existing) };
    // Only this function inserts PROPOSED rows: one left PROPOSED is a recorded conclusion whose
    // terminal write never committed (its worker was fenced out or died in between). Finish it
    // now, or it would stay PROPOSED for good.
    if (existing.status !== 'proposed') return settleRefusedResubmission(d, now, request, run, concluded, existing, key);
    recorded = existing;
  }
  const status = concluded.invocationStatus === 'denied' ? 'denied' : 'failed';
  return writeTerminal(d, tenantId, recorded, run, now, {
    status,
    reasonCode: concluded.item.outcome.reason_code,
    result: { content: concluded.item.content, structured: null, trust: 'platform' },
    error: null,
    outputBytes: null,
    truncated: false,
    artifactId: null,
    durationMs: null,
  });
}

/**
 * A call admitted earlier (AUTHORIZED, WAITING_FOR_APPROVAL, or RUNNING left by a dead worker)
 * whose resubmission steps 1–7 now refuse — a scope revoked, a policy that now denies. Recovery
 * re-checks authority once per attempt and never substitutes an old watermark for it, so the
 * call is not executed again; the row is settled instead. A NON_IDEMPOTENT call whose watermark
 * is set may already have had its effect: UNCERTAIN (Decision 8 reserves UNCERTAIN for exactly
 * that). Otherwise the refusal stands.
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
  const runRow = await d.runs.get(tenantId, existing.runId);
  const holdsLease = runRow !== null && runRow.leaseOwner === d.owner && runRow.fencingToken === run.fence.fencingToken;
  if (inFlightHere || !holdsLease) return concludeWithoutExecution(request.callId, existing.toolName, 'tool.concurrency_conflict', existing.status);
  const mayHaveHappened = existing.effectSentAt !== null && existing.idempotencyClass === 'non_idempotent';
  if (mayHaveHappened) return completeWithoutExecution(d, tenantId, existing, run, now, 'uncertain', 'tool.outcome_unknown');
  return completeWithoutExecution(d, tenantId, existing, run, now, concluded.invocationStatus === 'denied' ? 'denied' : 'failed', concluded.item.outcome.reason_code, concluded.item.content);
}
