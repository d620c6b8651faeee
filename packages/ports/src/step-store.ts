import type { BreakerEvidence, RunFailureReason } from '@veetbot/domain';
import type { InvocationRow } from './invocation-store';
import type { BreakerTally, RunRow } from './run-store';
import type { SessionRow } from './session-store';

// The conventions every store follows are in stores.ts.

export type StepStatus = 'pending' | 'running' | 'completed';

export interface StepRow {
  readonly id: string;
  readonly tenantId: string;
  readonly runId: string;
  readonly stepNumber: number;
  /** The model step's batch of tool calls, as submitted. */
  readonly batch: unknown;
  readonly status: StepStatus;
  readonly createdAt: Date;
}

export interface NewStep {
  readonly runId: string;
  readonly stepNumber: number;
  readonly batch: unknown;
  readonly createdAt: Date;
  /**
   * Default `pending` (the api's: a worker will claim it). `running`: the caller runs it now,
   * under the run's lease (an in-process submission), so no second write marks it started.
   */
  readonly status?: 'pending' | 'running';
}

export interface StepStore {
  /** UNIQUE(run_id, step_number): a resubmitted step returns the stored one. */
  insert(
    tenantId: string,
    step: NewStep,
  ): Promise<{ readonly inserted: true; readonly row: StepRow } | { readonly inserted: false; readonly existing: StepRow }>;
  get(tenantId: string, runId: string, stepNumber: number): Promise<StepRow | null>;
  /**
   * The step with its run and the run's session, read together (one statement on PostgreSQL):
   * what a worker needs before it runs a step it claimed. null when the step does not exist
   * for this tenant.
   */
  getWithContext(tenantId: string, runId: string, stepNumber: number): Promise<StepContext | null>;
  setStatus(tenantId: string, runId: string, stepNumber: number, status: StepStatus): Promise<StepRow>;
  /**
   * docs/adr/0049: a step's opening, all or nothing in one statement on PostgreSQL — the run
   * (under its row lock) and its session checked, the run's lease taken, the step stored RUNNING
   * (or the stored one read; a worker's PENDING one marked RUNNING), the breaker tallies read.
   * Nothing is written unless it answers `opened`.
   */
  open(tenantId: string, opening: StepOpeningRequest): Promise<StepOpening>;
  /**
   * docs/adr/0049: a step's end, in one statement on PostgreSQL, under the lease until its last
   * write: the step's rows read, the step COMPLETED when every call has its terminal row, the run
   * failed (when `failReason`; only a running run), then the lease released if `fencingToken`
   * still holds it.
   */
  finish(tenantId: string, finish: StepFinish): Promise<StepFinished>;
}

export interface StepOpeningRequest {
  readonly runId: string;
  readonly stepNumber: number;
  /** The batch to store as a new RUNNING step; null: the step must be stored already (a worker's claim). */
  readonly batch: unknown;
  readonly createdAt: Date;
  /** The lease to take: whose, until when, and the time it is judged free at. */
  readonly owner: string;
  readonly leaseExpiresAt: Date;
  readonly now: Date;
  /**
   * The breaker tally the caller holds (docs/adr/0049): taken through `throughStep` under the
   * lease of `fencingToken`. When the run still carries that token and this step follows that
   * one, no row has changed since (every write of an invocation row takes the lease), so the
   * earlier steps' tally is not read again.
   */
  readonly tallyHeld?: { readonly fencingToken: number; readonly throughStep: number } | undefined;
}

export type StepOpening =
  | { readonly kind: 'run_not_found' }
  | { readonly kind: 'run_not_active'; readonly run: RunRow }
  | { readonly kind: 'session_not_found'; readonly run: RunRow }
  | { readonly kind: 'session_closed'; readonly run: RunRow; readonly session: SessionRow }
  /** Another owner holds the run's lease live. */
  | { readonly kind: 'busy' }
  /** § Control tools: a new step while the run waits for its user's answer. */
  | { readonly kind: 'waiting_for_user' }
  /** A stored step was asked for (batch null) and there is none. */
  | { readonly kind: 'step_not_found' }
  /**
   * docs/adr/0070: a worker's claimed step (batch null) of a tenant already running as many
   * steps as its quota allows; nothing was written, the step stays pending.
   */
  | { readonly kind: 'over_quota' }
  | {
      readonly kind: 'opened';
      /** As the lease left it: the new fencing token is `run.fencingToken`. */
      readonly run: RunRow;
      readonly session: SessionRow;
      readonly step: StepRow;
      /** False: a step was stored under this number already (a resubmission, or the api's). */
      readonly inserted: boolean;
      /** The breaker tally of the steps before this one; null when the caller's (`tallyHeld`) still holds. */
      readonly earlier: BreakerTally | null;
      /**
       * The run's breaker evidence (docs/adr/0078) as the last finish left it, read with
       * `earlier` (null with it when the caller's tally still holds, or when the run has none).
       */
      readonly evidence: BreakerEvidence | null;
      /** Of the steps after it, when the run has a tool budget (stored `maximum_tool_calls`); else null. */
      readonly later: BreakerTally | null;
      /**
       * What the run's delegated children charge to its budget (docs/adr/0050: a live child its
       * whole allowance, an ended one what its subtree spent), when the run has a tool budget; else null.
       */
      readonly delegated: number | null;
    };

export interface StepFinish {
  readonly runId: string;
  readonly stepNumber: number;
  readonly fencingToken: number;
  /** The step's calls: it is COMPLETED when each has a terminal row. */
  readonly callIds: readonly string[];
  /** The run fails with this reason (docs/adr/0020); null: it does not. */
  readonly failReason: RunFailureReason | null;
  readonly at: Date;
  /**
   * The step came from the step queue: its finish sends the queue's done notification
   * (StepQueue.notifyDone) in the same commit, so the api's wait wakes without another statement.
   */
  readonly notifyDone?: boolean;
  /**
   * The run's breaker evidence after this step (docs/adr/0078), when the step changed it; written
   * with the lease's release, only if the token still holds it. Absent or null: unchanged.
   */
  readonly breakerEvidence?: BreakerEvidence | null;
}

export interface StepFinished {
  /** Every row of the step, as InvocationStore.listForRun orders them, read before the writes. */
  readonly rows: readonly InvocationRow[];
  /** Every call had its terminal row: the step is COMPLETED. */
  readonly complete: boolean;
  /** The run this finish failed; null when it failed none. */
  readonly failed: RunRow | null;
  /** The lease was still this fencing token's and is released. */
  readonly released: boolean;
}

export interface StepContext {
  readonly step: StepRow;
  readonly run: RunRow | null;
  readonly session: SessionRow | null;
}
