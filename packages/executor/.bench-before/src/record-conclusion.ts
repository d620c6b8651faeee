import { idempotencyKey, isTerminalInvocationStatus, sha256Hex, type ToolSpec, type TrustLevel } from '@veetbot/domain';
import type { DurableDeps, RunContext } from './durable-deps';
import type { Concluded } from './render-item';
import type { ToolCallRequest } from './tool-call-request';
import { toolEvent } from './tool-events';
import { displayedToolName } from './displayed-tool-name';
import { renderToolResultItem } from './steps/step-14-render-outcome';
import { writeTerminal } from './steps/terminal-write';

/**
 * A call that ended before step 8 (denied, or invalid arguments) touched nothing, but it is
 * still a fact of the run: the audit trail, the breaker and a resubmitted batch all read it.
 * It is recorded as a terminal row under the same key derivation, so resubmitting the call
 * returns the recorded outcome. Unvalidated arguments are not stored.
 */
export async function recordConclusion(
  d: DurableDeps,
  now: Date,
  request: ToolCallRequest,
  run: RunContext,
  concluded: Concluded,
  known: { spec: ToolSpec | null; argumentsHash: string | null; arguments: Record<string, unknown> | null; originTrust: TrustLevel },
): Promise<Concluded> {
  const tenantId = request.principal.tenant_id;
  const argumentsHash = known.argumentsHash ?? sha256Hex('veetbot.arguments.unhashable');
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
    // only when it is a registry-grammar identifier.
    toolName: displayedToolName(request.toolName),
    toolVersion: known.spec?.version ?? 'unresolved',
    status: 'proposed' as const,
    idempotencyKey: key,
    argumentsHash,
    arguments: known.arguments ?? {},
    toolSource: known.spec?.source ?? 'builtin',
    serverId: known.spec?.server_id ?? null,
    // No tool ran and none ever will under this key; the most restrictive class is recorded.
    idempotencyClass: known.spec?.idempotency ?? 'non_idempotent',
    originTrust: known.originTrust,
    parallelGroup: run.parallelGroup,
    createdAt: now,
  };
  const inserted = await d.invocations.insertIntent(tenantId, row, [toolEvent('tool.call.proposed', { ...row, attemptNumber: 1 }, now)]);
  if (!inserted.inserted) {
    const existing = inserted.existing;
    return isTerminalInvocationStatus(existing.status) ? { kind: 'concluded', invocationStatus: existing.status, item: renderToolResultItem(existing) } : concluded;
  }
  const status = concluded.invocationStatus === 'denied' ? 'denied' : 'failed';
  return writeTerminal(d, tenantId, inserted.row, run, now, {
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
