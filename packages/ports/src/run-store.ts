import type { InvocationStatus, RunFailureReason, ToolOutcomeStatus } from '@veetbot/domain';
import type { LeaseFence } from './fence';

// Runs: leases, fencing, breaker tallies.
// The conventions every store follows are in stores.ts.

export type RunStatus = 'running' | 'waiting_for_user' | 'succeeded' | 'failed' | 'cancelled';

export interface RunRow {
  readonly id: string;
  readonly tenantId: string;
  readonly sessionId: string;
  readonly parentRunId: string | null;
  readonly status: RunStatus;
  readonly deadlineAt: Date;
  readonly budgets: Record<string, unknown>;
  readonly leaseOwner: string | null;
  readonly leaseExpiresAt: Date | null;
  /** 0 until the first acquisition. */
  readonly fencingToken: number;
  readonly createdAt: Date;
  readonly finishedAt: Date | null;
  /** Why a `failed` run failed (RunFailureReason, docs/adr/0020); null otherwise. */
  readonly failureReason: RunFailureReason | null;
  /** The final answer the run's agent completed it with; null until then (docs/adr/0034). */
  readonly result: string | null;
}

export interface NewRun {
  readonly id?: string;
  readonly sessionId: string;
  readonly parentRunId?: string | null;
  readonly deadlineAt: Date;
  readonly budgets: Record<string, unknown>;
  readonly createdAt: Date;
}

/**
 * Invocation rows of one run with the same breaker key (tool name, arguments hash) and the same
 * status, outcome status and reason code: what replaying those rows one by one would count.
 */
export interface BreakerTallyGroup {
  readonly toolName: string;
  readonly argumentsHash: string;
  readonly status: InvocationStatus;
  readonly outcomeStatus: ToolOutcomeStatus | null;
  readonly reasonCode: string | null;
  /** Rows in the group, at least 1. */
  readonly count: number;
}

export interface BreakerTally {
  /** Rows counted: the sum of the groups' counts. */
  readonly rows: number;
  readonly groups: readonly BreakerTallyGroup[];
}

/** Inclusive bounds on step_number; an absent bound is open. */
export interface StepRange {
  readonly from?: number;
  readonly to?: number;
}

export interface AcquiredLease {
  readonly fencingToken: number;
  readonly leaseExpiresAt: Date;
}

/** A lease just taken, with the run as the acquisition left it (read under the run's row lock). */
export interface AcquiredRunLease extends AcquiredLease {
  readonly run: RunRow;
}

export interface RunStore {
  create(tenantId: string, run: NewRun): Promise<RunRow>;
  get(tenantId: string, runId: string): Promise<RunRow | null>;
  /**
   * Take the run's lease when it is free, expired, or already `owner`'s. Every acquisition
   * increments the fencing token, fencing out writes made under any earlier token. Null when
   * someone else holds a live lease. `store.not_found` when the run does not exist.
   */
  acquireLease(tenantId: string, runId: string, owner: string, ttlMs: number, now: Date): Promise<AcquiredRunLease | null>;
  /** Extend the lease held under `fence` to now + ttlMs. Throws FencingError when fenced out. */
  renewLease(tenantId: string, fence: LeaseFence, ttlMs: number, now: Date): Promise<AcquiredLease>;
  /** Give the lease up (suspension, end of work). False when the fence was already stale. */
  releaseLease(tenantId: string, fence: LeaseFence): Promise<boolean>;
  /** Terminal statuses also set finished_at = at; `failed` records its reason (docs/adr/0020). */
  setStatus(tenantId: string, runId: string, status: RunStatus, at: Date, failureReason?: RunFailureReason): Promise<RunRow>;
  /**
   * `running` → `succeeded` with its final answer, finished_at = at, in one conditional write.
   * Null when the run is not running (already ended, cancelled, or waiting for its user);
   * `store.not_found` when there is no such run.
   */
  complete(tenantId: string, runId: string, result: string, at: Date): Promise<RunRow | null>;
  /** The runs whose parent_run_id is `parentRunId` (delegate.run's children). */
  listChildren(tenantId: string, parentRunId: string): Promise<RunRow[]>;
  /**
   * What the run's delegated children charge to its tool-call budget (docs/adr/0050): a child
   * still running its whole allowance, an ended one what its subtree spent (at most its allowance).
   */
  delegatedCalls(tenantId: string, runId: string): Promise<number>;
}
