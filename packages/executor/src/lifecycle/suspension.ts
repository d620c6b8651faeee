import type { SuspendedKind, ToolResultInput, ToolSpec } from '@veetbot/domain';
import type { ConsentSuspended, InvocationRow, NewEvent } from '@veetbot/ports';
import { ScrubbingCredentialResolver } from '../credential-scrubber';
import type { DurableDeps, RunContext } from '../durable-deps';
import type { PipelineDeps } from '../pipeline-deps';
import { validateResult } from '../steps/step-11-validate-result';
import { truncateOrArtifactize } from '../steps/step-12-truncate-or-artifactize';
import { persistResult } from '../steps/step-13-persist-result';
import { endWithoutResult, type Terminated } from './terminal-write';

/** § Control tools: the run-level events of a suspension and its resumption (docs/adr/0034). */
export const SUSPENSION_EVENT_TYPES = {
  suspended: 'run.suspended',
  resumed: 'run.resumed',
  childStarted: 'run.child.started',
  childJoined: 'run.child.joined',
} as const;

/**
 * Identity only, like the seven tool events (§ Events and telemetry): which call waits, for what
 * kind of thing, and its reference — never the question, the answer or the child's result.
 */
export function suspensionEvent(
  type: (typeof SUSPENSION_EVENT_TYPES)[keyof typeof SUSPENSION_EVENT_TYPES],
  row: Pick<InvocationRow, 'id' | 'runId' | 'stepNumber' | 'callId' | 'toolName' | 'idempotencyKey'>,
  suspendedKind: SuspendedKind,
  suspendedRef: string,
  at: Date,
  extra: Readonly<Record<string, string | number | null>> = {},
): NewEvent {
  return {
    runId: row.runId,
    type,
    payload: {
      ...callIdentity(row),
      suspended_kind: suspendedKind,
      suspended_ref: suspendedRef,
      ...extra,
    },
    // An orchestration may wait on several approvals in turn (docs/adr/0039): each is its own fact.
    derivationKey:
      suspendedKind === 'approval' || suspendedKind === 'authorization'
        ? `${row.idempotencyKey}:${type}:${suspendedRef}`
        : `${row.idempotencyKey}:${type}`,
    createdAt: at,
  };
}

/**
 * § Control tools: the row stays RUNNING with its suspension marker, committed with its
 * `run.suspended` event; the caller releases the lease. From here only the resumption path (an
 * answer, a child's end) or the run's cancellation ends the row — never the recovery sweep.
 */
export function suspendCall(
  d: Pick<DurableDeps, 'invocations'>,
  tenantId: string,
  row: InvocationRow,
  run: Pick<RunContext, 'fence'>,
  now: Date,
  suspendedKind: SuspendedKind,
  suspendedRef: string,
  authorization?: ConsentSuspended,
): Promise<InvocationRow> {
  const events = [suspensionEvent(SUSPENSION_EVENT_TYPES.suspended, row, suspendedKind, suspendedRef, now)];
  if (authorization !== undefined) events.push(authorizationRequiredEvent(row, authorization, now));
  return d.invocations.suspend(tenantId, row.id, run.fence, { kind: suspendedKind, ref: suspendedRef }, events);
}

/**
 * docs/adr/0082: the call waits for a person's consent — which consent, the server and the
 * principal it is for. Identity only, like the tool events: never the link (external text that
 * carries the state; GET /v1/runs/:id shows it), a token or the verifier.
 */
export function authorizationRequiredEvent(
  row: Pick<InvocationRow, 'id' | 'runId' | 'stepNumber' | 'callId' | 'toolName' | 'idempotencyKey'>,
  consent: ConsentSuspended,
  at: Date,
): NewEvent {
  return {
    runId: row.runId,
    type: 'tool.call.authorization_required',
    payload: {
      ...callIdentity(row),
      consent_id: consent.id,
      server_id: consent.serverId,
      principal_id: consent.principalId,
    },
    derivationKey: `${row.idempotencyKey}:tool.call.authorization_required:${consent.id}`,
    createdAt: at,
  };
}

/** § Control tools: RUNNING with a suspension marker and a released lease — waiting for a user or a child run. */
export function isSuspended(row: InvocationRow): boolean {
  return row.status === 'running' && row.suspendedKind !== null;
}

export class NotSuspendedError extends Error {
  override name = 'NotSuspendedError';
}

/** The event a suspended row ends with; a row that is no longer suspended is refused (NotSuspendedError). */
function resumptionEvent(
  eventType: (typeof SUSPENSION_EVENT_TYPES)[keyof typeof SUSPENSION_EVENT_TYPES],
  row: InvocationRow,
  now: Date,
): NewEvent {
  if (!isSuspended(row) || row.suspendedKind === null || row.suspendedRef === null) throw new NotSuspendedError(row.id);
  return suspensionEvent(eventType, row, row.suspendedKind, row.suspendedRef, now);
}

/**
 * The resumption path (§ Control tools): the answer or the child's result arrives, and the
 * suspended row is completed with it through steps 11–13 as any tool's result would be —
 * validated, trust-clamped to the spec's output_trust, excerpted or artifactized, enveloped
 * below USER — with its `run.resumed` / `run.child.joined` event in the same commit. Under the
 * run's lease the caller holds; a row that is no longer suspended is refused (NotSuspendedError).
 */
export async function completeSuspended(
  deps: Pick<PipelineDeps, 'validator'> & { readonly durable: DurableDeps },
  tenantId: string,
  row: InvocationRow,
  spec: ToolSpec,
  run: Pick<RunContext, 'fence'>,
  now: Date,
  value: ToolResultInput,
  eventType: typeof SUSPENSION_EVENT_TYPES.resumed | typeof SUSPENSION_EVENT_TYPES.childJoined,
): Promise<Terminated> {
  const event = resumptionEvent(eventType, row, now);
  const d = deps.durable;
  const durationMs = row.startedAt === null ? null : Math.max(0, now.getTime() - row.startedAt.getTime());
  const credentials = new ScrubbingCredentialResolver(d.credentials);
  const validated = validateResult(
    deps.validator,
    { spec },
    { kind: 'returned', value, effectSent: false, durationMs: durationMs ?? 0 },
    credentials,
  );
  const writer = d.artifacts.forScope({ tenantId, runId: row.runId, invocationId: row.id });
  const output = await truncateOrArtifactize(validated, spec.name, spec.maximum_output_bytes, d.outputs.inlineMaximumBytes, writer);
  return persistResult(d, tenantId, row, run, now, validated, output, [event]);
}

/** A suspended row that ends without a result (a child that failed or was cancelled), with its join event. */
export function endSuspended(
  d: Pick<DurableDeps, 'invocations'>,
  tenantId: string,
  row: InvocationRow,
  run: Pick<RunContext, 'fence'>,
  now: Date,
  reasonCode: string,
  eventType: (typeof SUSPENSION_EVENT_TYPES)[keyof typeof SUSPENSION_EVENT_TYPES],
): Promise<Terminated> {
  const event = resumptionEvent(eventType, row, now);
  return endWithoutResult(d, tenantId, row, run, now, 'failed', reasonCode, [], [event]);
}

/** Which call an event is about: the fields every suspension event's payload starts with. */
function callIdentity(row: Pick<InvocationRow, 'id' | 'runId' | 'stepNumber' | 'callId' | 'toolName'>) {
  return { invocation_id: row.id, run_id: row.runId, step_number: row.stepNumber, call_id: row.callId, tool_name: row.toolName };
}
