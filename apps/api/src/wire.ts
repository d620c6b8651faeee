import type {
  Approval,
  Invocation,
  McpServer,
  McpServerPreparation as WirePreparation,
  OperatorMcpServer,
  Reconciliation,
  Review,
  Run,
  Session,
  StreamEvent,
  ToolDefinition,
} from '@veetbot/client';
import { parseCredentialRef } from '@veetbot/domain';
import type { McpServerConfig } from '@veetbot/mcp-adapter';
import type {
  ApprovalRow,
  EventRow,
  InvocationRow,
  McpServerPreparation,
  McpServerRow,
  ReconciliationRow,
  ReviewRow,
  RunRow,
  SessionRow,
} from '@veetbot/ports';

/** Rows (camelCase, Dates) to the wire (the specification's snake_case, ISO 8601 strings). */

export const iso = (d: Date): string => d.toISOString();
export const isoOrNull = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** The pinned, model-visible definitions (§ Milestone 26: application-only tools are pinned but never shown). */
export function toolDefinitions(session: SessionRow): ToolDefinition[] {
  // A deferred tool is advertised by its one-line entry instead (§ Control tools, tool.call).
  const deferred = new Set(session.deferredToolNames);
  return session.specs
    .filter((s) => s.model_visible && !deferred.has(s.name))
    .map((s) => ({ name: s.name, description: s.description, input_schema: s.input_schema }));
}

export function sessionWire(session: SessionRow, preparation?: readonly McpServerPreparation[]): Session {
  return {
    id: session.id,
    agent_id: session.agentId,
    status: session.status,
    tool_schema_sha256: session.toolSchemaSha256,
    tools: toolDefinitions(session),
    deferred_tools: [...session.deferredToolNames],
    created_at: iso(session.createdAt),
    closed_at: isoOrNull(session.closedAt),
    ...(preparation === undefined ? {} : { mcp_servers: preparation.map(preparationWire) }),
  };
}

function preparationWire(p: McpServerPreparation): WirePreparation {
  return {
    server_id: p.serverId,
    transport: p.transport,
    status: p.status,
    reason_code: p.reasonCode,
    ...(p.detail === undefined ? {} : { detail: p.detail }),
    tool_count: p.toolCount,
  };
}

export function runWire(run: RunRow): Run {
  const limit = run.budgets.maximum_tool_calls;
  return {
    id: run.id,
    session_id: run.sessionId,
    status: run.status,
    deadline_at: iso(run.deadlineAt),
    budgets: typeof limit === 'number' ? { maximum_tool_calls: limit } : {},
    created_at: iso(run.createdAt),
    finished_at: isoOrNull(run.finishedAt),
    failure_reason: run.failureReason,
    parent_run_id: run.parentRunId,
    result: run.result,
  };
}

export function reviewWire(review: ReviewRow): Review {
  return {
    id: review.id,
    invocation_id: review.invocationId,
    run_id: review.runId,
    resolution: review.resolution,
    note: review.note,
    reviewed_by: review.reviewedBy,
    reviewed_at: iso(review.reviewedAt),
  };
}

/** docs/adr/0063: what the sweep's reconciler tried on an UNCERTAIN call. */
export function reconciliationWire(r: ReconciliationRow): Reconciliation {
  return {
    reconciler: r.reconciler,
    attempts: r.attempts,
    last_outcome: r.lastOutcome,
    last_evidence: r.lastEvidence,
    next_attempt_at: isoOrNull(r.nextAttemptAt),
    updated_at: iso(r.updatedAt),
  };
}

/** `reconciliation`: given (even null) on the review queue and a single invocation; left out of listings. */
export function invocationWire(row: InvocationRow, review: ReviewRow | null, reconciliation?: ReconciliationRow | null): Invocation {
  return {
    id: row.id,
    run_id: row.runId,
    session_id: row.sessionId,
    step_number: row.stepNumber,
    call_id: row.callId,
    tool_name: row.toolName,
    tool_version: row.toolVersion,
    status: row.status,
    idempotency_key: row.idempotencyKey,
    arguments_hash: row.argumentsHash,
    arguments: row.arguments,
    result: row.result ?? null,
    error: row.error ?? null,
    created_at: iso(row.createdAt),
    started_at: isoOrNull(row.startedAt),
    finished_at: isoOrNull(row.finishedAt),
    tool_source: row.toolSource,
    server_id: row.serverId,
    idempotency_class: row.idempotencyClass,
    effect_sent_at: isoOrNull(row.effectSentAt),
    attempt_number: row.attemptNumber,
    suspended_kind: row.suspendedKind,
    suspended_ref: row.suspendedRef,
    output_bytes: row.outputBytes,
    truncated: row.truncated,
    artifact_id: row.artifactId,
    outcome_status: row.outcomeStatus,
    reason_code: row.reasonCode,
    origin_trust: row.originTrust,
    parallel_group: row.parallelGroup,
    policy_version: row.policyVersion,
    policy_rule_id: row.policyRuleId,
    review: review === null ? null : reviewWire(review),
    ...(reconciliation === undefined ? {} : { reconciliation: reconciliation === null ? null : reconciliationWire(reconciliation) }),
  };
}

export function approvalWire(approval: ApprovalRow, invocation: InvocationRow): Approval {
  return {
    id: approval.id,
    invocation_id: approval.invocationId,
    run_id: approval.runId,
    status: approval.status,
    requested_at: iso(approval.requestedAt),
    decided_by: approval.decidedBy,
    decided_at: isoOrNull(approval.decidedAt),
    step_number: invocation.stepNumber,
    call_id: invocation.callId,
    tool_name: invocation.toolName,
    arguments: invocation.arguments,
    arguments_hash: approval.argumentsHash,
    policy_version: approval.policyVersion,
    policy_rule_id: approval.policyRuleId,
  };
}

export function mcpServerWire(row: McpServerRow): McpServer {
  return {
    server_id: row.serverId,
    transport: row.transport,
    endpoint: row.endpoint,
    auth_scheme: row.authScheme,
    auth_name: row.authName,
    credential_ref: shownCredentialRef(row.credentialRef),
    token_endpoint: row.tokenEndpoint,
    token_scopes: row.tokenScopes,
    side_effect: row.sideEffect,
    risk: row.risk,
    idempotency: row.idempotency,
    required_scopes: row.requiredScopes,
    timeout_seconds: row.timeoutSeconds,
    maximum_output_bytes: row.maximumOutputBytes,
    enabled: row.enabled,
    created_at: iso(row.createdAt),
  };
}

/**
 * ADR 0017: a tenant row shows only a `secret:NAME` reference. Anything else in the column
 * (a row from before the rule, or written around the API) may be an operator's variable name
 * or a pasted value: it is shown as null, never echoed.
 */
function shownCredentialRef(ref: string | null): string | null {
  return parseCredentialRef(ref)?.kind === 'secret' ? ref : null;
}

/** Operator servers as tenants may read them: no credential reference, no auth name. */
export function operatorServerWire(config: McpServerConfig): OperatorMcpServer {
  return {
    server_id: config.serverId,
    transport: config.transport,
    endpoint: config.endpoint,
    args: config.args ?? [],
    auth_scheme: config.authScheme,
    side_effect: config.sideEffect,
    risk: config.risk,
    idempotency: config.idempotency,
    required_scopes: config.requiredScopes,
    timeout_seconds: config.timeoutSeconds,
    maximum_output_bytes: config.maximumOutputBytes,
    enabled: config.enabled,
  };
}

export function eventWire(event: EventRow): StreamEvent {
  return {
    id: event.id,
    run_id: event.runId,
    sequence: event.sequence,
    type: event.type,
    payload: event.payload,
    created_at: iso(event.createdAt),
  };
}
