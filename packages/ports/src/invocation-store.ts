import type { IdempotencyClass, InvocationStatus, SuspendedKind, ToolOutcomeStatus, ToolSource, TrustLevel } from '@veetbot/domain';
import type { ApprovalRow } from './approval-store';
import type { NewEvent } from './event-store';
import type { LeaseFence } from './fence';
import type { BreakerTally, StepRange } from './run-store';

// Tool invocations (Section 15 + § Schema additions).
// The conventions every store follows are in stores.ts.

export type TerminalInvocationStatus = 'succeeded' | 'failed' | 'denied' | 'uncertain';

/** Every column of tool_invocations. */
export interface InvocationRow {
  readonly id: string;
  readonly tenantId: string;
  readonly runId: string;
  readonly sessionId: string;
  readonly stepNumber: number;
  readonly callId: string;
  readonly toolName: string;
  readonly toolVersion: string;
  readonly status: InvocationStatus;
  readonly idempotencyKey: string;
  readonly argumentsHash: string;
  readonly arguments: Record<string, unknown>;
  readonly result: unknown;
  readonly error: unknown;
  readonly createdAt: Date;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  // § Schema additions
  readonly toolSource: ToolSource;
  readonly serverId: string | null;
  readonly idempotencyClass: IdempotencyClass;
  readonly effectSentAt: Date | null;
  readonly attemptNumber: number;
  readonly suspendedKind: SuspendedKind | null;
  readonly suspendedRef: string | null;
  readonly outputBytes: number | null;
  readonly truncated: boolean;
  readonly artifactId: string | null;
  readonly outcomeStatus: ToolOutcomeStatus | null;
  readonly reasonCode: string | null;
  readonly originTrust: TrustLevel;
  readonly parallelGroup: string | null;
  /**
   * The policy that decided step 6 (PolicyDecision.policy_version, docs/adr/0047) and its rule;
   * null for a call refused before step 6 (nothing evaluated it) and for rows older than
   * migration 0020.
   */
  readonly policyVersion: string | null;
  readonly policyRuleId: string | null;
}

/**
 * What step 8 inserts. A WAITING_FOR_APPROVAL row gets its pending approval (requested_at =
 * createdAt) in the same transaction.
 */
export interface NewInvocation {
  /** Default: a random UUID. */
  readonly id?: string;
  readonly runId: string;
  readonly sessionId: string;
  readonly stepNumber: number;
  readonly callId: string;
  readonly toolName: string;
  readonly toolVersion: string;
  readonly status: 'proposed' | 'authorized' | 'waiting_for_approval';
  readonly idempotencyKey: string;
  readonly argumentsHash: string;
  readonly arguments: Record<string, unknown>;
  readonly toolSource: ToolSource;
  readonly serverId: string | null;
  /** Snapshot at authorize time: recovery reads this, never the registry. */
  readonly idempotencyClass: IdempotencyClass;
  readonly originTrust: TrustLevel;
  readonly parallelGroup: string | null;
  /** Step 6's policy version and rule; a WAITING_FOR_APPROVAL row's approval binds to them. */
  readonly policyVersion?: string | null;
  readonly policyRuleId?: string | null;
  readonly createdAt: Date;
}

/**
 * § Deduplication on the way in: a unique violation on idempotency_key is the dedup path, not
 * an error. `inserted: false` carries the row that holds the key; its events were not written.
 */
export type InsertIntentResult =
  | { readonly inserted: true; readonly row: InvocationRow }
  | { readonly inserted: false; readonly existing: InvocationRow };

/** Step 13's terminal write. */
export interface InvocationTerminal {
  readonly status: TerminalInvocationStatus;
  readonly outcomeStatus: ToolOutcomeStatus;
  readonly reasonCode: string;
  readonly result: unknown;
  readonly error: unknown;
  readonly outputBytes: number | null;
  readonly truncated: boolean;
  readonly artifactId: string | null;
  readonly finishedAt: Date;
}

/** The policy decision that asked for an approval (PolicyDecision's policy_version and rule_id). */
export interface ApprovalPolicy {
  readonly version: string;
  readonly ruleId: string;
}

export interface InvocationSuspension {
  readonly kind: SuspendedKind;
  /** The question id, the child run id, or (approval) the bridge call's approval id. */
  readonly ref: string;
}

export interface InvocationStore {
  /** Step 8 [COMMIT]. Row and events commit together; on dedup nothing is written. */
  insertIntent(tenantId: string, row: NewInvocation, events: readonly NewEvent[]): Promise<InsertIntentResult>;
  /**
   * PROPOSED, AUTHORIZED or RUNNING (unsuspended; step 10's pre-effect re-check, docs/adr/0023)
   * -> WAITING_FOR_APPROVAL, and a pending approval record (an existing one is kept), in one
   * transaction (RULINGS.md "Vocabulary"). Fenced. The row records `policy` (the decision that
   * asked); an existing approval asked under another policy version is re-opened pending under
   * this one — a decision binds to the version it was made under (docs/adr/0047) — and a row
   * already WAITING_FOR_APPROVAL is accepted for exactly that re-ask.
   */
  setWaitingForApproval(
    tenantId: string,
    invocationId: string,
    fence: LeaseFence,
    requestedAt: Date,
    policy: ApprovalPolicy,
    events: readonly NewEvent[],
  ): Promise<{ readonly row: InvocationRow; readonly approval: ApprovalRow }>;
  /**
   * PROPOSED -> AUTHORIZED, or WAITING_FOR_APPROVAL -> AUTHORIZED when the row's approval is
   * approved (approval re-enters at step 6, then step 8 authorizes). Fenced.
   */
  authorize(tenantId: string, invocationId: string, fence: LeaseFence, events: readonly NewEvent[]): Promise<InvocationRow>;
  /**
   * Step 9 [COMMIT]: AUTHORIZED -> RUNNING (attempt_number stays 1), or RUNNING -> RUNNING as a
   * re-claim after recovery (attempt_number + 1). Sets started_at. A suspended row cannot be
   * claimed, except one suspended `approval` (an orchestration whose bridge call's approval has
   * been decided, docs/adr/0039): its claim clears the marker and keeps attempt_number — the
   * resumption is not a crash. Throws FencingError when the fence is stale.
   */
  claim(tenantId: string, invocationId: string, fence: LeaseFence, startedAt: Date, events: readonly NewEvent[]): Promise<InvocationRow>;
  /**
   * § The effect watermark: sets effect_sent_at only while NULL, in its own short transaction,
   * and returns the stored timestamp (later calls are no-ops returning the first). Only a
   * RUNNING row can be marked. Fenced.
   */
  markEffectSent(tenantId: string, invocationId: string, fence: LeaseFence, at: Date): Promise<Date>;
  /** § Control tools: a RUNNING row gets its suspension marker (it stays RUNNING). Fenced. */
  suspend(
    tenantId: string,
    invocationId: string,
    fence: LeaseFence,
    suspension: InvocationSuspension,
    events: readonly NewEvent[],
  ): Promise<InvocationRow>;
  /**
   * Step 13 [COMMIT]: from any non-terminal status (PROPOSED, AUTHORIZED,
   * WAITING_FOR_APPROVAL, RUNNING) to a terminal one. A terminal row is never rewritten
   * (InvalidTransitionError). Fenced.
   */
  complete(
    tenantId: string,
    invocationId: string,
    fence: LeaseFence,
    terminal: InvocationTerminal,
    events: readonly NewEvent[],
  ): Promise<InvocationRow>;
  getById(tenantId: string, invocationId: string): Promise<InvocationRow | null>;
  getByKey(tenantId: string, idempotencyKey: string): Promise<InvocationRow | null>;
  /**
   * Ordered by step_number, then created_at. `steps`: only rows whose step_number is within
   * these inclusive bounds (the runtime reads one step's rows, or the rows before a step).
   */
  listForRun(tenantId: string, runId: string, steps?: StepRange): Promise<InvocationRow[]>;
  /**
   * § The circuit breakers' input, without the rows: the run's invocations within `steps`,
   * counted by breaker key and outcome. A step reads this instead of every earlier row, so
   * its cost does not grow with the size of what the rows carry (arguments, results).
   */
  breakerTally(tenantId: string, runId: string, steps?: StepRange): Promise<BreakerTally>;
  /**
   * The recovery sweep, across tenants: RUNNING rows whose run lease expired (or was released)
   * at `now`, EXCLUDING rows with suspended_kind set (§ Control tools). Oldest first.
   */
  findExpiredRunning(now: Date, limit: number): Promise<InvocationRow[]>;
  /**
   * § MCP failure modes, the within-run repeat guard: the latest UNCERTAIN row of this run with
   * the same tool and arguments hash, or null.
   */
  findUncertainRepeat(tenantId: string, runId: string, toolName: string, argumentsHash: string): Promise<InvocationRow | null>;
}
