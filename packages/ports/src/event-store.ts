import type { BrowserDiagnostics, IdempotencyClass, ToolOutcomeStatus, ToolSource } from '@veetbot/domain';

// The event log (RULINGS.md "Event log"; § Events and telemetry).
// The conventions every store follows are in stores.ts.

/** The seven tool events (§ Events and telemetry: the list is complete). */
export type ToolCallEventType =
  | 'tool.call.proposed'
  | 'tool.call.authorized'
  | 'tool.call.denied'
  | 'tool.call.started'
  | 'tool.call.completed'
  | 'tool.call.failed'
  | 'tool.call.uncertain';

/**
 * § Events and telemetry: "The event carries identity and classification. The row carries the
 * payload." No arguments, no result, no error detail, no external text. The store refuses a
 * `tool.call.*` event whose payload has any other field (`store.event_payload_refused`).
 */
export interface ToolCallEventPayload {
  readonly invocation_id: string;
  readonly run_id: string;
  readonly step_number: number;
  readonly call_id: string;
  readonly tool_name: string;
  readonly tool_source?: ToolSource;
  readonly tool_version?: string;
  readonly outcome_status?: ToolOutcomeStatus | null;
  readonly reason_code?: string | null;
  readonly idempotency_class?: IdempotencyClass;
  readonly effect_sent?: boolean;
  readonly duration_ms?: number | null;
  readonly output_bytes?: number | null;
  readonly truncated?: boolean;
  readonly parallel_group?: string | null;
  /** ADR-0158: on a builtin browser tool's completed or failed event only (docs/adr/0079). */
  readonly browser_diagnostics?: BrowserDiagnostics;
}

export interface NewEvent {
  /** Null for a tenant-level event that belongs to no run (its own stream). */
  readonly runId: string | null;
  readonly type: string;
  readonly payload: Readonly<Record<string, unknown>>;
  /**
   * Unique per tenant: the same fact derived twice (a retried write, a replayed script) is one
   * event. Appending a key that exists returns the committed event instead of a duplicate.
   */
  readonly derivationKey: string;
  readonly createdAt: Date;
}

export interface EventRow {
  readonly id: string;
  readonly tenantId: string;
  readonly runId: string | null;
  /** Per stream (the run, or the tenant's run-less stream): 1, 2, 3, ... gapless, assigned in the writing transaction. */
  readonly sequence: number;
  readonly type: string;
  readonly payload: Record<string, unknown>;
  readonly derivationKey: string;
  readonly createdAt: Date;
}

export interface EventStore {
  /** One transaction; returns the committed events in input order (existing ones for known keys). */
  append(tenantId: string, events: readonly NewEvent[]): Promise<EventRow[]>;
  /**
   * SSE replay: events of one stream with sequence > afterSequence, ascending. `runId` null
   * reads the tenant's run-less stream. Every event returned is durable: an event whose commit
   * was deferred (ADR 0015) is flushed before it is returned, so a reader never holds an event
   * that a server crash could take back, nor a sequence number that could be given again.
   */
  listAfter(tenantId: string, runId: string | null, afterSequence: number, limit: number): Promise<EventRow[]>;
}

/**
 * What wakes a live SSE stream (docs/adr/0054): one listener per process, instead of a poll per
 * stream. A stream subscribes to its (tenant, stream) before its first read, so a notification
 * that lands between a read and the next wait is never lost: it makes that wait return at once.
 * Wakes are hints — the stream always re-reads the table from its last sequence (the table is
 * the only source) and keeps a slow poll for a notification the database never delivered.
 */
export interface EventFeed {
  /** `runId` null: the tenant's run-less stream. */
  subscribe(tenantId: string, runId: string | null): EventFeedSubscription;
}

export interface EventFeedSubscription {
  /** Resolves when the stream may have new events, after `timeoutMs`, on `signal`, or when the feed closes. */
  wait(timeoutMs: number, signal?: AbortSignal): Promise<void>;
  /** The stream has sent everything through `sequence`: a notification at or below it wakes nothing. */
  seen(sequence: number): void;
  close(): void;
}
