import type {
  ApiKeyRow,
  ApprovalRow,
  BreakerTally,
  BreakerTallyGroup,
  InvocationRow,
  InvocationTerminal,
  NewEvent,
  NewInvocation,
  RunRow,
  SessionRow,
  StepRow,
} from '@veetbot/ports';
import { BreakerEvidence } from '@veetbot/domain';
import { getTableColumns, type Table } from 'drizzle-orm';
import { PgTimestamp } from 'drizzle-orm/pg-core';
import type { PreparedStatement } from '../database';
import { apiKeys, approvals, runs, sessions, steps, toolInvocations } from '../schema';
import { assertEventPayload } from './event-payload';

/**
 * The JSON the hot-path functions of sql/functions (veetbot_insert_intent.sql and the other
 * transitions) take and return. Column names and value conversions come from the drizzle table, so a row read back
 * is the row drizzle's own select would give.
 */
const COLUMNS = Object.entries(getTableColumns(toolInvocations));

/** A new row by column name; only the fields given, so the others take their defaults. */
export function newRowJson(tenantId: string, row: NewInvocation): string {
  const values: Record<string, unknown> = { ...row, tenantId };
  const out: Record<string, unknown> = {};
  for (const [key, column] of COLUMNS) {
    const value = values[key];
    if (value === undefined) continue;
    out[column.name] = value instanceof Date ? value.toISOString() : value;
  }
  return JSON.stringify(out);
}

/** A converter from `to_jsonb(row)` of `table` to the row drizzle's own select would give. */
function fromJsonOf<T>(table: Table): (json: unknown) => T {
  const columns = Object.entries(getTableColumns(table));
  return (json) => {
    const record = (typeof json === 'string' ? JSON.parse(json) : json) as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [key, column] of columns) {
      const value = record[column.name] ?? null;
      out[key] = value !== null && column instanceof PgTimestamp ? new Date(value as string) : value;
    }
    return out as T;
  };
}

/** A stored row from `to_jsonb(tool_invocations)`. */
export const rowFromJson = fromJsonOf<InvocationRow>(toolInvocations);
/** A stored row from `to_jsonb(runs)`. */
export const runFromJson = fromJsonOf<RunRow>(runs);
/** A stored row from `to_jsonb(api_keys)`. */
export const apiKeyFromJson = fromJsonOf<ApiKeyRow>(apiKeys);
/** A stored row from `to_jsonb(steps)`. */
export const stepFromJson = fromJsonOf<StepRow>(steps);
/** A stored row from `to_jsonb(approvals)`. */
export const approvalFromJson = fromJsonOf<ApprovalRow>(approvals);
/** A stored row from `to_jsonb(sessions)`. */
export const sessionFromJson = fromJsonOf<SessionRow>(sessions);

export function terminalJson(terminal: InvocationTerminal): string {
  return JSON.stringify({
    status: terminal.status,
    outcome_status: terminal.outcomeStatus,
    reason_code: terminal.reasonCode,
    result: terminal.result ?? null,
    error: terminal.error ?? null,
    output_bytes: terminal.outputBytes,
    truncated: terminal.truncated,
    artifact_id: terminal.artifactId,
    finished_at: terminal.finishedAt.toISOString(),
  });
}

/**
 * The events, their tool payloads checked first (the check is pure: § Events and telemetry),
 * and their stream when the batch is one stream with distinct derivation keys — always so for
 * a call's own tool events — so the function appends without grouping
 * (sql/functions/veetbot_append_call_events.sql); null sends any other batch through the
 * general path.
 */
export function eventsArguments(input: readonly NewEvent[]): [stream: string | null, events: string] {
  const keys = new Set<string>();
  let stream: string | null = input.length === 0 ? '' : (input[0]?.runId ?? '');
  for (const event of input) {
    assertEventPayload(event);
    if ((event.runId ?? '') !== stream || keys.has(event.derivationKey)) stream = null;
    keys.add(event.derivationKey);
  }
  const events = JSON.stringify(
    input.map((event) => ({
      run_id: event.runId,
      type: event.type,
      payload: { ...event.payload },
      derivation_key: event.derivationKey,
      created_at: event.createdAt.toISOString(),
    })),
  );
  return [stream, events];
}

/** The hot-path functions and their argument types, in order (each one file of sql/functions). */
const SIGNATURES = {
  // The governed call's transitions of a tool_invocations row (ADR 0027: the store's only copy).
  veetbot_insert_intent: ['text', 'jsonb', 'text', 'jsonb'],
  veetbot_wait_for_approval: ['text', 'uuid', 'text', 'bigint', 'timestamptz', 'text', 'text', 'text', 'jsonb'],
  veetbot_authorize: ['text', 'uuid', 'text', 'bigint', 'text', 'jsonb'],
  veetbot_claim: ['text', 'uuid', 'text', 'bigint', 'timestamptz', 'text', 'jsonb'],
  veetbot_mark_effect_sent: ['text', 'uuid', 'text', 'bigint', 'timestamptz'],
  veetbot_suspend: ['text', 'uuid', 'text', 'bigint', 'text', 'text', 'text', 'jsonb'],
  veetbot_complete: ['text', 'uuid', 'text', 'bigint', 'jsonb', 'text', 'jsonb'],
  // The api's per-step reads and writes.
  veetbot_step_view: ['text', 'uuid', 'integer', 'integer'],
  veetbot_find_api_key: ['text'],
  veetbot_submit_step: ['text', 'uuid', 'integer', 'jsonb', 'timestamptz'],
  veetbot_submit_call: ['text', 'uuid', 'text', 'jsonb', 'timestamptz'],
  veetbot_claim_pending: ['integer', 'timestamptz', 'integer', 'jsonb'],
  veetbot_step_context: ['text', 'uuid', 'integer'],
  // A step's opening and end around its calls (docs/adr/0049).
  veetbot_open_step: [
    'text',
    'uuid',
    'integer',
    'jsonb',
    'timestamptz',
    'text',
    'timestamptz',
    'timestamptz',
    'bigint',
    'integer',
    'integer',
  ],
  veetbot_finish_step: ['text', 'uuid', 'integer', 'bigint', 'text[]', 'text[]', 'text', 'timestamptz', 'text', 'text', 'jsonb'],
  veetbot_list_invocations: ['text', 'uuid', 'integer', 'integer'],
  // The circuit breakers' input.
  veetbot_breaker_tally: ['text', 'uuid', 'integer', 'integer'],
  // What a run's delegated children charge to its budget (docs/adr/0050).
  veetbot_delegated_calls: ['text', 'uuid'],
} as const;

const TEXTS = Object.fromEntries(
  Object.entries(SIGNATURES).map(([name, types]) => [
    name,
    `select ${name}(${types.map((type, i) => `$${i + 1}::${type}`).join(', ')}) as result`,
  ]),
) as Record<keyof typeof SIGNATURES, string>;

/** One call of a hot-path function as a named statement: parsed and planned once per connection. */
export function hot(name: keyof typeof SIGNATURES, values: readonly unknown[]): PreparedStatement {
  return { name, text: TEXTS[name], values };
}

/**
 * veetbot_breaker_tally's groups (sql/functions/veetbot_breaker_tally.sql): each one array of
 * [tool_name, arguments_hash, status, outcome_status, reason_code, count] — positional, so
 * a tally of thousands of groups repeats no key names.
 */
/**
 * A run's stored breaker evidence (docs/adr/0078). One that does not parse is read as none: the
 * replay then counts every identical call, the strict direction, never a looser one.
 */
export function evidenceFromJson(json: unknown): BreakerEvidence | null {
  if (json === null || json === undefined) return null;
  const checked = BreakerEvidence.safeParse(parsed(json));
  return checked.success ? checked.data : null;
}

export function tallyFromJson(json: unknown): BreakerTally {
  const groups = (parsed(json) as TallyTuple[]).map(
    ([toolName, argumentsHash, status, outcomeStatus, reasonCode, count]): BreakerTallyGroup => ({
      toolName,
      argumentsHash,
      status,
      outcomeStatus,
      reasonCode,
      count,
    }),
  );
  return { rows: groups.reduce((sum, g) => sum + g.count, 0), groups };
}

type TallyTuple = [string, string, BreakerTallyGroup['status'], BreakerTallyGroup['outcomeStatus'], string | null, number];

/** The function's jsonb result, whichever way the driver delivered it. */
export function parsed(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}
