import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { OUTCOME_FIELDS, REASON_CODES, type ToolResultItem } from '@veetbot/domain';
import type { EventRow } from '@veetbot/ports';
import { openPipelineHarness, openTestDatabase, type Driver, type PipelineHarness, type TestDatabase } from '../src';

/**
 * One database per driver per file (opening one is the slow part), a fresh scene per test.
 * Call inside a describe; read the scene through the returned getter.
 */
export function usePipelineHarness(driver: Driver): () => PipelineHarness {
  let database: TestDatabase | undefined;
  let harness: PipelineHarness | undefined;
  beforeAll(async () => {
    database = await openTestDatabase(driver);
  });
  afterAll(async () => {
    await database?.close();
  });
  beforeEach(async () => {
    harness = await openPipelineHarness(database!);
  });
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });
  return () => {
    if (harness === undefined) throw new Error('no harness outside a test');
    return harness;
  };
}

/** The fields every tool event carries (§ Events and telemetry). */
export const IDENTITY_FIELDS = [
  'call_id',
  'idempotency_class',
  'invocation_id',
  'parallel_group',
  'run_id',
  'step_number',
  'tool_name',
  'tool_source',
  'tool_version',
] as const;

/** The fields a terminal tool event adds. */
export const TERMINAL_FIELDS = ['duration_ms', 'effect_sent', 'outcome_status', 'output_bytes', 'reason_code', 'truncated'] as const;

/** The exact key set each tool event type carries. */
export function expectedEventKeys(type: string): string[] {
  if (type === 'tool.call.proposed' || type === 'tool.call.authorized') return [...IDENTITY_FIELDS].sort();
  if (type === 'tool.call.started') return [...IDENTITY_FIELDS, 'effect_sent'].sort();
  return [...IDENTITY_FIELDS, ...TERMINAL_FIELDS].sort();
}

/** Hard gate 4: exactly six fields, and the message is the checked-in table's for the code. */
export function expectSixFieldOutcome(item: ToolResultItem, reasonCode: string): void {
  expect(Object.keys(item.outcome).sort()).toEqual([...OUTCOME_FIELDS].sort());
  expect(item.outcome.reason_code).toBe(reasonCode);
  const entry = (REASON_CODES as Record<string, { message: string; status: string }>)[reasonCode];
  expect(entry, `${reasonCode} is in the table`).toBeDefined();
  expect(item.outcome.message).toBe(entry!.message);
  expect(item.outcome.status).toBe(entry!.status);
}

export function eventTypes(events: readonly EventRow[]): string[] {
  return events.map((e) => e.type);
}

/** § What the model reads: one whole trust envelope, as the domain frames it. */
const ENVELOPE =
  /^\u27E6untrusted source="([^"]+)" trust="([a-z_]+)" nonce="([0-9a-f]{16})"\u27E7\n([\s\S]*)\n\u27E6\/untrusted nonce="\3"\u27E7$/;

export interface Envelope {
  readonly source: string;
  readonly trust: string;
  readonly nonce: string;
  readonly body: string;
}

/** The envelope `text` is, exactly; null when it is not one whole envelope. */
export function unwrapEnvelope(text: string): Envelope | null {
  const m = ENVELOPE.exec(text);
  return m === null ? null : { source: m[1]!, trust: m[2]!, nonce: m[3]!, body: m[4]! };
}
