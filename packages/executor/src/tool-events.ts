import type { InvocationRow, NewEvent, ToolCallEventPayload, ToolCallEventType } from '@veetbot/ports';

/**
 * § Events and telemetry: the seven tool events carry identity and classification only — no
 * arguments, no result, no error detail, no external text (the row carries those). Each has a
 * stable derivation key, so a retried write is one event, not two.
 */
export function toolEvent(
  type: ToolCallEventType,
  row: Pick<
    InvocationRow,
    | 'id'
    | 'runId'
    | 'stepNumber'
    | 'callId'
    | 'toolName'
    | 'toolSource'
    | 'toolVersion'
    | 'idempotencyClass'
    | 'idempotencyKey'
    | 'parallelGroup'
    | 'attemptNumber'
  >,
  at: Date,
  extra: Partial<
    Pick<
      ToolCallEventPayload,
      'outcome_status' | 'reason_code' | 'effect_sent' | 'duration_ms' | 'output_bytes' | 'truncated' | 'browser_diagnostics'
    >
  > = {},
): NewEvent {
  const payload: ToolCallEventPayload = {
    invocation_id: row.id,
    run_id: row.runId,
    step_number: row.stepNumber,
    call_id: row.callId,
    tool_name: row.toolName,
    tool_source: row.toolSource,
    tool_version: row.toolVersion,
    idempotency_class: row.idempotencyClass,
    parallel_group: row.parallelGroup,
    ...extra,
  };
  // started repeats per attempt; every other event happens once per invocation.
  const suffix = type === 'tool.call.started' ? `${type}:${row.attemptNumber}` : type;
  return { runId: row.runId, type, payload: { ...payload }, derivationKey: `${row.idempotencyKey}:${suffix}`, createdAt: at };
}
