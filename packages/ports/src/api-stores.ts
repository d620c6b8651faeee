import type { BreakerEvidence, IdempotencyClass, InvocationStatus, RiskLevel, SideEffectClass } from '@veetbot/domain';
import type { NewEvent } from './event-store';
import type { InvocationRow } from './invocation-store';
import type { McpCatalogRow } from './mcp-catalog-store';
import type { McpAuthScheme, McpServerRow } from './mcp-server-store';
import type { BreakerTally, RunRow } from './run-store';
import type { SessionStatus } from './session-store';
import type { NewStep, StepRow } from './step-store';

/*
 * What the tenants' HTTP API reads and writes beyond the pipeline's own stores (apps/api): the
 * invocation listing, the UNCERTAIN review queue and its audited resolutions, and updates of a
 * tenant's MCP server rows. The conventions of stores.ts hold: the tenant first, row-level
 * security for that tenant only, caller-supplied times, StoreError codes.
 */

/** Keyset pagination over (created_at, id): the last row of the previous page. */
export interface PageCursor {
  readonly createdAt: Date;
  readonly id: string;
}

export interface PageRequest {
  /** Rows strictly after this one in (created_at, id) order; null: from the start. */
  readonly after: PageCursor | null;
  readonly limit: number;
}

export interface InvocationFilter {
  readonly runId?: string;
  readonly status?: InvocationStatus;
  readonly toolName?: string;
}

/** What the api reads to answer a step: the run, the step's invocations, and the breaker's input through the step. */
export interface StepView {
  readonly run: RunRow | null;
  /** The step's own rows, in listForRun's order: creation time, then call id. */
  readonly rows: InvocationRow[];
  /**
   * breakerTally of the run's rows with step_number ≤ the step, of only the keys near a
   * threshold (IDENTICAL_CALL_THRESHOLD − 1 identical calls or more, or any denial): enough to
   * decide synthesis-only exactly, and it does not grow with the run (docs/adr/0049).
   */
  readonly tally: BreakerTally;
  /** The run's breaker evidence (docs/adr/0078): the restarts that take counts off the tally; null: none. */
  readonly evidence: BreakerEvidence | null;
}

export interface InvocationQueryStore {
  /** The run, the step's invocations, and the tally through the step, read together (one statement). */
  stepView(tenantId: string, runId: string, stepNumber: number): Promise<StepView>;
  /** The tenant's invocations matching every given filter, oldest first ((created_at, id) ascending). */
  list(tenantId: string, filter: InvocationFilter, page: PageRequest): Promise<InvocationRow[]>;
  /** The review queue: UNCERTAIN invocations nobody has resolved yet, oldest first. */
  listUnreviewedUncertain(tenantId: string, page: PageRequest): Promise<InvocationRow[]>;
}

/** What a human found out about an UNCERTAIN call (§ Recovery: "UNCERTAIN; human review"). */
/**
 * What really happened to an UNCERTAIN call: the effect took place (succeeded), was attempted
 * and failed (failed), or never reached the other side (not_applied; docs/adr/0047).
 */
export type ReviewResolution = 'succeeded' | 'failed' | 'not_applied';

/**
 * One resolution of one UNCERTAIN invocation. The invocation row itself stays UNCERTAIN: it
 * records what the system knew; the review records what a person established afterwards.
 */
export interface ReviewRow {
  readonly id: string;
  readonly tenantId: string;
  readonly invocationId: string;
  readonly runId: string;
  readonly resolution: ReviewResolution;
  readonly note: string;
  /** The principal holding `review.resolve`. */
  readonly reviewedBy: string;
  readonly reviewedAt: Date;
}

export interface NewReview {
  readonly invocationId: string;
  readonly resolution: ReviewResolution;
  readonly note: string;
  readonly reviewedBy: string;
  readonly reviewedAt: Date;
}

export interface ReviewStore {
  /**
   * Record the resolution and its events in one transaction. `store.not_found` when the
   * invocation is not the tenant's; InvalidTransitionError when it is not UNCERTAIN or was
   * already resolved (a resolution is written once).
   */
  record(tenantId: string, review: NewReview, events: readonly NewEvent[]): Promise<ReviewRow>;
  getByInvocation(tenantId: string, invocationId: string): Promise<ReviewRow | null>;
}

/** The mutable columns of a tenant MCP server; server_id and transport never change. */
export interface McpServerPatch {
  readonly endpoint?: string;
  readonly authScheme?: McpAuthScheme;
  readonly authName?: string | null;
  readonly credentialRef?: string | null;
  readonly tokenEndpoint?: string | null;
  readonly tokenScopes?: readonly string[] | null;
  readonly sideEffect?: SideEffectClass;
  readonly risk?: RiskLevel;
  readonly idempotency?: IdempotencyClass;
  readonly requiredScopes?: readonly string[];
  readonly timeoutSeconds?: number;
  readonly maximumOutputBytes?: number;
  readonly enabled?: boolean;
}

export interface McpServerAdminStore {
  /** Apply the patch (validated by the caller as a whole configuration). `store.not_found` when absent. */
  update(tenantId: string, serverId: string, patch: McpServerPatch): Promise<McpServerRow>;
}

/**
 * What storing a submitted step found, read and written together (one statement): the run
 * (null: this tenant has no such run), its session's status when the run is running, and the
 * step — inserted `pending` when the run is running in an open session, else the step already
 * held under that number, or null. The api turns this into its answer (404, 409, or the
 * resubmission's batch check).
 */
export interface SubmittedStep {
  readonly run: RunRow | null;
  readonly sessionStatus: SessionStatus | null;
  readonly step: StepRow | null;
  readonly inserted: boolean;
}

export interface StepSubmissionStore {
  /**
   * Stores a step `pending` (or finds the one held under its number). A step it inserts wakes
   * the workers in the same commit (StepQueue.notify's wake-up, docs/adr/0076): the caller sends
   * no notification of its own for it, and arms its wait for the outcome before calling.
   */
  submit(tenantId: string, step: NewStep): Promise<SubmittedStep>;
  /**
   * The MCP gateway's submission (docs/adr/0044): a one-call step named by its call id, not by
   * a step number. In one transaction holding the run's row lock: the step of this run whose
   * batch already holds `callId` is returned as it is (a repeat: the recorded call, never a
   * second one); else, when the run is running in an open session, the batch is inserted
   * `pending` as the run's next step number. Two submissions of one call id, in any processes,
   * find one step.
   */
  submitCall(tenantId: string, call: NewCallStep): Promise<SubmittedStep>;
}

export interface NewCallStep {
  readonly runId: string;
  readonly callId: string;
  /** The stored batch (runtime toStoredBatch) holding exactly the one call. */
  readonly batch: unknown;
  readonly createdAt: Date;
}

/** Every API-side store of one database. */
/** A server's catalog history as the api reads it (docs/adr/0046: the console's generations and diff). */
export interface McpCatalogHistoryStore {
  /** Every catalog row of the server for this tenant, oldest discovery first, at most `limit`. */
  history(tenantId: string, serverId: string, limit: number): Promise<McpCatalogRow[]>;
}

export interface ApiStores {
  readonly invocationQueries: InvocationQueryStore;
  readonly mcpCatalogHistory: McpCatalogHistoryStore;
  readonly reviews: ReviewStore;
  readonly mcpServerAdmin: McpServerAdminStore;
  readonly stepSubmissions: StepSubmissionStore;
}
