import { BrowserDiagnostics, StoreError } from '@veetbot/domain';
import type { NewEvent, ToolCallEventType } from '@veetbot/ports';

export const TOOL_CALL_EVENT_TYPES: ReadonlySet<ToolCallEventType> = new Set([
  'tool.call.proposed',
  'tool.call.authorized',
  'tool.call.denied',
  'tool.call.started',
  'tool.call.completed',
  'tool.call.failed',
  'tool.call.uncertain',
]);

/**
 * § Events and telemetry: the fields a tool event may carry, all of them identity or
 * classification. Arguments, results, error detail and external text live in
 * tool_invocations; the event stream is replayed to SSE consumers and exported, so a field
 * outside this list is refused rather than stored.
 */
export const TOOL_CALL_EVENT_FIELDS: ReadonlySet<string> = new Set([
  'invocation_id',
  'run_id',
  'step_number',
  'call_id',
  'tool_name',
  'tool_source',
  'tool_version',
  'outcome_status',
  'reason_code',
  'idempotency_class',
  'effect_sent',
  'duration_ms',
  'output_bytes',
  'truncated',
  'parallel_group',
]);

/**
 * § Browser operation diagnostics (ADR-0158, docs/adr/0079): the browser tools' terminal events
 * may carry `browser_diagnostics` — closed enums, bounded timings and a flag, classification
 * only — so it is admitted on completed and failed events alone, and only when it parses as the
 * domain's strict schema (anything else would be a way for free text into the stream).
 */
const BROWSER_DIAGNOSTICS_EVENTS: ReadonlySet<string> = new Set(['tool.call.completed', 'tool.call.failed']);

/**
 * docs/adr/0082: a call suspended for a person's consent. Identity only, like the seven: the
 * pending consent's id, the server and the principal it is for — never the authorization URL
 * (built from an authorization server's metadata, and carrying the state); GET /v1/runs/:id
 * shows that to an API key that may read the run.
 */
export const AUTHORIZATION_REQUIRED_EVENT = 'tool.call.authorization_required';
const AUTHORIZATION_REQUIRED_FIELDS: ReadonlySet<string> = new Set([
  'invocation_id',
  'run_id',
  'step_number',
  'call_id',
  'tool_name',
  'consent_id',
  'server_id',
  'principal_id',
]);

export function assertEventPayload(event: NewEvent): void {
  if (!event.type.startsWith('tool.call.')) return;
  if (event.type === AUTHORIZATION_REQUIRED_EVENT) {
    for (const field of Object.keys(event.payload))
      if (!AUTHORIZATION_REQUIRED_FIELDS.has(field))
        throw new StoreError(
          'store.event_payload_refused',
          `An authorization_required event carries identity only; refused field: ${field}`,
        );
    return;
  }
  if (!TOOL_CALL_EVENT_TYPES.has(event.type as ToolCallEventType)) {
    throw new StoreError('store.event_payload_refused', `Not one of the seven tool events: ${event.type}`);
  }
  for (const field of Object.keys(event.payload)) {
    if (field === 'browser_diagnostics' && BROWSER_DIAGNOSTICS_EVENTS.has(event.type)) {
      if (!BrowserDiagnostics.safeParse(event.payload[field]).success) {
        throw new StoreError('store.event_payload_refused', 'browser_diagnostics does not match its closed schema');
      }
      continue;
    }
    if (!TOOL_CALL_EVENT_FIELDS.has(field)) {
      throw new StoreError('store.event_payload_refused', `A tool event carries identity and classification only; refused field: ${field}`);
    }
  }
}
