import type { NewReview } from './api-stores';
import type { NewEvent } from './event-store';
import type { InvocationRow } from './invocation-store';
import type { WorkspaceFiles } from './workspaces';

/*
 * Reconciliation of UNCERTAIN calls (issue 25; docs/adr/0063). § The effect watermark: a row is
 * UNCERTAIN because effect_sent_at was committed and nobody saw the effect land. A reconciler
 * turns that into a fact by LOOKING at the system the effect would have changed — it never
 * re-executes the call, never writes to that system, and answers `unknown` whenever its
 * evidence does not cross-check.
 */

/** What a reconciler is told about one UNCERTAIN invocation: the row's own record, nothing else. */
export interface ReconcileQuery {
  readonly tenantId: string;
  readonly runId: string;
  readonly invocationId: string;
  readonly toolName: string;
  readonly toolVersion: string;
  /** The 64-hex key the call carried (§ Idempotency): the exact lookup key where the target records it. */
  readonly idempotencyKey: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** effect_sent_at: the effect, if any, happened after this. */
  readonly watermarkAt: Date;
  /** The run's workspace files (docs/adr/0058: the only way to reach them), null when none; opened on first ask. */
  workspace(): Promise<WorkspaceFiles | null>;
  /** Aborted when the attempt's time is up; a lookup still running then counts as a failure. */
  readonly signal: AbortSignal;
}

/**
 * `applied`: the effect is visible in the target, matching the call's key and arguments.
 * `not_applied`: a complete, cross-checked read of the target shows no trace of it.
 * `unknown`: anything else (no lookup exists, the read could not be cross-checked, a trace that
 * does not match the arguments). `evidence` is a short operator-facing sentence: what was read
 * and what it showed. Never tenant secrets.
 */
export type ReconcileOutcome = 'applied' | 'not_applied' | 'unknown';

export interface ReconcileAnswer {
  readonly outcome: ReconcileOutcome;
  readonly evidence: string;
}

export interface Reconciler {
  /** Used in reviewed_by (`reconciler:<name>`), the event and the metric label. */
  readonly name: string;
  /** Read-only. A throw is a failed attempt (retried with backoff, then left to a person). */
  reconcile(query: ReconcileQuery): Promise<ReconcileAnswer>;
}

/**
 * The reconcilers a deployment has, by tool. null: the tool has none — the sweep never offers
 * its rows (an MCP tool of a server with no lookup tool, docs/adr/0066), and they wait for a
 * person as before.
 */
export interface Reconcilers {
  forTool(toolName: string, toolVersion: string): Reconciler | null;
  /** Every tool name forTool answers for (the sweep asks the store for those rows only). */
  toolNames(): readonly string[];
}

/** What the sweep persists about its attempts on one UNCERTAIN invocation (invocation_reconciliations). */
export interface ReconciliationRow {
  readonly tenantId: string;
  readonly invocationId: string;
  readonly reconciler: string;
  readonly attempts: number;
  /** When the next attempt is due; null: no more attempts (answered, or attempts spent). */
  readonly nextAttemptAt: Date | null;
  /** The last attempt's answer, or `error` when it threw or timed out. */
  readonly lastOutcome: ReconcileOutcome | 'error';
  /** The last attempt's evidence, or the error's stable description. */
  readonly lastEvidence: string;
  readonly updatedAt: Date;
}

export interface ReconciliationAttempt {
  readonly invocationId: string;
  readonly reconciler: string;
  readonly attempts: number;
  readonly nextAttemptAt: Date | null;
  readonly lastOutcome: ReconcileOutcome | 'error';
  readonly lastEvidence: string;
  readonly at: Date;
}

export interface ReconciliationStore {
  /**
   * Across tenants (the sweep's maintenance read): UNCERTAIN rows of these tools with
   * effect_sent_at set, no review, whose reconciliation is absent or due at `now`
   * (next_attempt_at ≤ now). Oldest first, at most `limit`.
   */
  findDue(now: Date, toolNames: readonly string[], limit: number): Promise<InvocationRow[]>;
  /** Upsert the attempt state (one row per invocation). */
  recordAttempt(tenantId: string, attempt: ReconciliationAttempt): Promise<ReconciliationRow>;
  /**
   * A definite answer: the review (reviewed_by `reconciler:<name>`), the attempt state and the
   * events in one transaction — exactly what a person's resolution writes (ReviewStore.record),
   * with the same errors (InvalidTransitionError when a person resolved it first).
   */
  settle(tenantId: string, review: NewReview, attempt: ReconciliationAttempt, events: readonly NewEvent[]): Promise<void>;
  get(tenantId: string, invocationId: string): Promise<ReconciliationRow | null>;
}
