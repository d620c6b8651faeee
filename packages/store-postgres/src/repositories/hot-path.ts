import type { InvocationRow, InvocationTerminal, NewEvent, NewInvocation } from '@veetbot/ports';
import { getTableColumns } from 'drizzle-orm';
import { PgTimestamp } from 'drizzle-orm/pg-core';
import { toolInvocations } from '../schema';
import { assertEventPayload } from './event-payload';

/**
 * The JSON the hot-path functions of migrations/0007_governed_call_functions.sql take and
 * return. Column names and value conversions come from the drizzle table, so a row read back
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

/** A stored row from `to_jsonb(tool_invocations)`. */
export function rowFromJson(json: unknown): InvocationRow {
  const record = (typeof json === 'string' ? JSON.parse(json) : json) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, column] of COLUMNS) {
    const value = record[column.name] ?? null;
    out[key] = value !== null && column instanceof PgTimestamp ? new Date(value as string) : value;
  }
  return out as unknown as InvocationRow;
}

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

/** The events, their tool payloads checked first (the check is pure: § Events and telemetry). */
export function eventsJson(input: readonly NewEvent[]): string {
  for (const event of input) assertEventPayload(event);
  return JSON.stringify(
    input.map((event) => ({
      run_id: event.runId,
      type: event.type,
      payload: { ...event.payload },
      derivation_key: event.derivationKey,
      created_at: event.createdAt.toISOString(),
    })),
  );
}

/** The function's jsonb result, whichever way the driver delivered it. */
export function parsed(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}
