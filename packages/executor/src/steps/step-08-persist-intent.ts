import { decideRecovery, idempotencyKey, isTerminalInvocationStatus, type InvocationStatus, type PolicyDecision } from '@veetbot/domain';
import type { InvocationRow, NewInvocation } from '@veetbot/ports';
import type { DurableDeps, RunContext } from '../durable-deps';
import type { AuthorizedCall } from '../pipeline-result';
import type { ToolCallRequest } from '../tool-call-request';
import { toolEvent } from '../tool-events';
import { endWithoutResult, type Terminated } from '../lifecycle/terminal-write';
import { holdsLiveLease } from '../lifecycle/lease';
import { renderToolResultItem } from './step-14-render-outcome';
import { concludeWithoutExecution, type Concluded } from '../render-item';
import { holdForApproval, type Withheld } from './step-07-request-approval';

export type IntentResult =
  /** AUTHORIZED (new, or left between steps 8 and 9), or RUNNING to re-claim under the recovery table. */
  | { readonly kind: 'proceed'; readonly row: InvocationRow }
  | { readonly kind: 'approval_required'; readonly row: InvocationRow }
  /** § Control tools: RUNNING with a suspension marker (a resubmission of a suspended call). */
  | { readonly kind: 'suspended'; readonly row: InvocationRow }
  | { readonly kind: 'concluded'; readonly concluded: Concluded | Terminated };

/** The call's idempotency key (§ The key), from the spec and normalized arguments hash steps 1–7 settled. */
export function idempotencyKeyOf(request: ToolCallRequest, call: Pick<AuthorizedCall, 'spec' | 'argumentsHash'>): string {
  return idempotencyKey({
    runId: request.runId,
    stepNumber: request.stepNumber,
    callId: request.callId,
    toolName: call.spec.name,
    toolVersion: call.spec.version,
    argumentsHash: call.argumentsHash,
  });
}

/** A new row's id and the call it records: every row, admitted or refused, starts from these. */
export function callIdentity(
  request: ToolCallRequest,
): Pick<NewInvocation, 'runId' | 'sessionId' | 'stepNumber' | 'callId'> & { readonly id: string } {
  return {
    id: globalThis.crypto.randomUUID(),
    runId: request.runId,
    sessionId: request.sessionId,
    stepNumber: request.stepNumber,
    callId: request.callId,
  };
}

/**
 * The tool_invocations row a call's intent is written as: identity, the key, the
 * idempotency_class snapshot, origin_trust, tool_source, server_id, parallel_group. The one
 * place a NewInvocation is built from an authorized call (the runtime's breaker refusals use it
 * too, so their rows and keys cannot drift from the pipeline's).
 */
export function intentRow(
  request: ToolCallRequest,
  call: Pick<AuthorizedCall, 'spec' | 'arguments' | 'argumentsHash' | 'originTrust'> & { readonly decision?: PolicyDecision },
  run: Pick<RunContext, 'parallelGroup'>,
  key: string,
  status: NewInvocation['status'],
  now: Date,
): NewInvocation & { readonly id: string } {
  return {
    ...callIdentity(request),
    toolName: call.spec.name,
    toolVersion: call.spec.version,
    status,
    idempotencyKey: key,
    argumentsHash: call.argumentsHash,
    arguments: call.arguments,
    toolSource: call.spec.source,
    serverId: call.spec.server_id,
    idempotencyClass: call.spec.idempotency,
    originTrust: call.originTrust,
    parallelGroup: run.parallelGroup,
    // docs/adr/0047: the policy that decided step 6 (a refusal recorded before it: null).
    policyVersion: call.decision?.policy_version ?? null,
    policyRuleId: call.decision?.rule_id ?? null,
    createdAt: now,
  };
}

/**
 * Step 8 [COMMIT]: persist intent — AUTHORIZED (or WAITING_FOR_APPROVAL with its approval
 * record), the key, the idempotency_class snapshot, origin_trust, tool_source, server_id and
 * parallel_group — with tool.call.proposed/.authorized in the same transaction. A unique
 * violation is the deduplication path (§ Deduplication on the way in).
 */
export async function persistIntent(
  d: DurableDeps,
  now: Date,
  request: ToolCallRequest,
  call: AuthorizedCall,
  run: RunContext,
  key: string,
  needsApproval: boolean,
): Promise<IntentResult> {
  const row = intentRow(request, call, run, key, needsApproval ? 'waiting_for_approval' : 'authorized', now);
  const identity = { ...row, attemptNumber: 1 };
  const events = [toolEvent('tool.call.proposed', identity, now)];
  if (!needsApproval) events.push(toolEvent('tool.call.authorized', identity, now));
  const inserted = await d.invocations.insertIntent(request.principal.tenant_id, row, events);
  if (inserted.inserted) return needsApproval ? { kind: 'approval_required', row: inserted.row } : { kind: 'proceed', row: inserted.row };
  return deduplicate(d, now, request, call, run, inserted.existing, needsApproval);
}

/** § Deduplication on the way in: the five rules, read from the existing row. */
async function deduplicate(
  d: DurableDeps,
  now: Date,
  request: ToolCallRequest,
  call: AuthorizedCall,
  run: RunContext,
  existing: InvocationRow,
  needsApproval: boolean,
): Promise<IntentResult> {
  const tenantId = request.principal.tenant_id;
  // Rule 2: terminal -> the recorded outcome, no execution.
  if (isTerminalInvocationStatus(existing.status)) {
    return { kind: 'concluded', concluded: { kind: 'concluded', invocationStatus: existing.status, item: renderToolResultItem(existing) } };
  }
  // Rule 5: WAITING_FOR_APPROVAL -> resume that approval, never a second one.
  if (existing.status === 'waiting_for_approval') {
    const approval = await d.approvals.getByInvocation(tenantId, existing.id);
    // docs/adr/0047: a decision binds to the policy version that asked. Policy changed since
    // (another profile in this process): step 7 again under the current version — the approval
    // re-opens pending when the policy still asks, whatever was decided under the old one.
    if (needsApproval && approval !== null && approval.policyVersion !== call.decision.policy_version)
      return held(await holdForApproval(d, tenantId, existing, run, () => now, call.decision, call.spec.name, request.callId), existing);
    if (approval?.status === 'approved') {
      const authorized = await d.invocations.authorize(tenantId, existing.id, run.fence, [
        toolEvent('tool.call.authorized', existing, now),
      ]);
      return { kind: 'proceed', row: authorized };
    }
    if (approval?.status === 'denied') {
      const reasonCode = call.decision.effect === 'require_approval' ? call.decision.reason_code : 'policy.approval.denied';
      return { kind: 'concluded', concluded: await endWithoutResult(d, tenantId, existing, run, now, 'denied', reasonCode) };
    }
    return { kind: 'approval_required', row: existing };
  }
  if (existing.status === 'proposed' || existing.status === 'authorized') {
    // A crash between steps 8 and 9 (or a refusal whose terminal write never committed): nothing
    // was claimed, nothing ran. If policy now asks a person, step 7 for the existing row: it
    // waits with its approval record, never answered "approval required" with none (ADR 0023).
    if (needsApproval)
      return held(await holdForApproval(d, tenantId, existing, run, () => now, call.decision, call.spec.name, request.callId), existing);
    return { kind: 'proceed', row: existing };
  }
  // RUNNING.
  // § Control tools: the call already suspended (a resubmitted step): the recorded state, never asked twice.
  // § Approvals inside a script (docs/adr/0039): an orchestration suspended on a bridge call's
  // approval runs again once that approval is decided — re-claimed at step 9 (which clears the
  // marker), the program re-executed from the start, every earlier call deduplicated.
  if (existing.suspendedKind === 'approval' && (await approvalDecided(d, tenantId, existing.suspendedRef))) {
    return { kind: 'proceed', row: existing };
  }
  // docs/adr/0082: a call suspended for a person's consent runs again once the consent was answered.
  if (
    existing.suspendedKind === 'authorization' &&
    existing.suspendedRef !== null &&
    d.consents !== undefined &&
    (await d.consents.answered(tenantId, existing.suspendedRef))
  )
    return { kind: 'proceed', row: existing };
  if (existing.suspendedKind !== null) return { kind: 'suspended', row: existing };
  // Rule 3: the owning worker's lease is live -> ConcurrencyConflict. We hold the live lease
  // (lifecycle/lease.ts) and the key is not in flight here (the pipeline checked), so the
  // worker that claimed the row held an earlier lease that has since expired: rule 4.
  if (!holdsLiveLease(await d.runs.get(tenantId, existing.runId), d.owner, run.fence, now))
    return { kind: 'concluded', concluded: conflict(request, existing.status) };
  const recovered = await recover(d, now, tenantId, existing, run);
  // Re-executing or replaying is a new attempt under current authority: if policy now asks a
  // person, the recovered row waits for one — for every tool, NONE side effects included (step
  // 10's re-check covers only the others). ADR 0023.
  if (recovered.kind !== 'proceed' || !needsApproval) return recovered;
  return held(await holdForApproval(d, tenantId, existing, run, () => now, call.decision, call.spec.name, request.callId), existing);
}

/** Whether the approval an orchestration waits on is no longer pending (approved, denied or expired). */
async function approvalDecided(d: DurableDeps, tenantId: string, approvalId: string | null): Promise<boolean> {
  if (approvalId === null) return false;
  const approval = await d.approvals.get(tenantId, approvalId);
  return approval !== null && approval.status !== 'pending';
}

/** A row step 7 held (or let through) as step 8's result. */
function held(withheld: Withheld | null, row: InvocationRow): IntentResult {
  if (withheld === null) return { kind: 'proceed', row };
  const { outcome } = withheld;
  return outcome.kind === 'approval_required' ? { kind: 'approval_required', row: outcome.row } : { kind: 'concluded', concluded: outcome };
}

/**
 * Rule 4: the recovery table, read from the row — idempotency_class and effect_sent_at as they
 * were when the call was authorized, never from the current registry.
 */
async function recover(d: DurableDeps, now: Date, tenantId: string, existing: InvocationRow, run: RunContext): Promise<IntentResult> {
  if (existing.attemptNumber >= d.maximumAttempts) {
    return { kind: 'concluded', concluded: await endWithoutResult(d, tenantId, existing, run, now, 'failed', 'tool.recovery_exhausted') };
  }
  const decision = decideRecovery(existing.idempotencyClass, existing.effectSentAt);
  if (decision === 'uncertain') {
    return { kind: 'concluded', concluded: await endWithoutResult(d, tenantId, existing, run, now, 'uncertain', 'tool.outcome_unknown') };
  }
  // re_execute and replay both claim again with the same key: the key is what lets the
  // external service deduplicate a replay.
  return { kind: 'proceed', row: existing };
}

function conflict(request: ToolCallRequest, status: InvocationStatus): Concluded {
  return concludeWithoutExecution(request.callId, request.toolName, 'tool.concurrency_conflict', status);
}
