import type {
  IdempotencyClass,
  InvocationStatus,
  RunFailureReason,
  RiskLevel,
  SideEffectClass,
  SuspendedKind,
  ToolOutcomeStatus,
  ToolSource,
  ToolSpec,
  TrustLevel,
} from '@veetbot/domain';

/*
 * The persistence ports (ARCHITECTURE.md "Data"). Row types use camelCase fields; each maps
 * one-to-one onto a snake_case column of the same name (`effectSentAt` is effect_sent_at).
 *
 * Conventions shared by every store:
 * - The first argument is the tenant. Every tenant operation runs with row-level security
 *   for that tenant only; another tenant's rows are invisible (a lookup returns null, never
 *   "forbidden"), so a caller cannot even learn that they exist.
 * - Times are supplied by the caller (ports.Clock), never read from the database clock, so
 *   tests and recovery reason about one clock.
 * - Failures are StoreError values from @veetbot/domain with a stable code: FencingError
 *   (`store.fenced`), InvalidTransitionError (`store.invalid_transition`), `store.not_found`,
 *   `store.serialization` (retryable), `store.cancelled`, `store.connection` (retryable), ...
 * - `events` arguments are committed in the same transaction as the row change they describe;
 *   if the change fails, no event is written.
 */

/** A run lease held by one worker; every execution write is checked against it (fencing). */
export interface LeaseFence {
  readonly runId: string;
  /** Strictly increases on every acquisition of the run's lease. */
  readonly fencingToken: number;
}

// ---------------------------------------------------------------------------------------
// Events (RULINGS.md "Event log"; § Events and telemetry)

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

// ---------------------------------------------------------------------------------------
// Tool invocations (Section 15 + § Schema additions)

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

export interface InvocationSuspension {
  readonly kind: SuspendedKind;
  /** The question id, or the child run id. */
  readonly ref: string;
}

export interface InvocationStore {
  /** Step 8 [COMMIT]. Row and events commit together; on dedup nothing is written. */
  insertIntent(tenantId: string, row: NewInvocation, events: readonly NewEvent[]): Promise<InsertIntentResult>;
  /**
   * PROPOSED, AUTHORIZED or RUNNING (unsuspended; step 10's pre-effect re-check, docs/adr/0023)
   * -> WAITING_FOR_APPROVAL, and a pending approval record (an existing one is kept), in one
   * transaction (RULINGS.md "Vocabulary"). Fenced.
   */
  setWaitingForApproval(
    tenantId: string,
    invocationId: string,
    fence: LeaseFence,
    requestedAt: Date,
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
   * claimed. Throws FencingError when the fence is stale.
   */
  claim(
    tenantId: string,
    invocationId: string,
    fence: LeaseFence,
    startedAt: Date,
    events: readonly NewEvent[],
  ): Promise<InvocationRow>;
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

// ---------------------------------------------------------------------------------------
// Runs and steps

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
}

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
}

export interface StepContext {
  readonly step: StepRow;
  readonly run: RunRow | null;
  readonly session: SessionRow | null;
}

// ---------------------------------------------------------------------------------------
// Sessions, approvals, artifacts, skills

export type SessionStatus = 'open' | 'closed';

/** The pinned plan (RULINGS.md "Context engine"): tool_names, specs, tool_schema_sha256. */
export interface SessionRow {
  readonly id: string;
  readonly tenantId: string;
  readonly principalId: string;
  readonly agentId: string;
  readonly toolNames: string[];
  readonly specs: ToolSpec[];
  readonly toolSchemaSha256: string;
  readonly status: SessionStatus;
  readonly createdAt: Date;
  readonly closedAt: Date | null;
}

export interface NewSession {
  readonly id?: string;
  readonly principalId: string;
  readonly agentId: string;
  readonly toolNames: readonly string[];
  readonly specs: readonly ToolSpec[];
  readonly toolSchemaSha256: string;
  readonly createdAt: Date;
}

export interface SessionStore {
  create(tenantId: string, session: NewSession): Promise<SessionRow>;
  get(tenantId: string, sessionId: string): Promise<SessionRow | null>;
  /** Idempotent: closing a closed session returns it unchanged. */
  close(tenantId: string, sessionId: string, at: Date): Promise<SessionRow>;
  /**
   * § MCP, the idle sweep: what became of sessions this process holds transports or
   * registrations for, whoever changed them — across tenants, in one statement, identity and
   * status only (docs/adr/0024). A session with no row (deleted, or never created) is absent
   * from the answer.
   */
  lifecycle(sessions: readonly SessionRef[]): Promise<SessionLifecycle[]>;
}

export interface SessionRef {
  readonly tenantId: string;
  readonly sessionId: string;
}

export interface SessionLifecycle extends SessionRef {
  readonly status: SessionStatus;
  /** Runs the session has had, whatever their status. */
  readonly runs: number;
  /**
   * Runs still at work: `running`, with no call waiting for an approval and no suspended call
   * (§ Control tools). A session whose runs all ended or suspended has had its run teardown.
   */
  readonly workingRuns: number;
}

export type ApprovalStatus = 'pending' | 'approved' | 'denied';

export interface ApprovalRow {
  readonly id: string;
  readonly tenantId: string;
  /** One approval per invocation (UNIQUE): a duplicate submit resumes the same approval. */
  readonly invocationId: string;
  readonly runId: string;
  readonly status: ApprovalStatus;
  readonly requestedAt: Date;
  readonly decidedBy: string | null;
  readonly decidedAt: Date | null;
}

export interface ApprovalDecision {
  readonly decision: 'approved' | 'denied';
  /** The principal holding `approvals.decide`. */
  readonly decidedBy: string;
  readonly decidedAt: Date;
}

export interface ApprovalStore {
  get(tenantId: string, approvalId: string): Promise<ApprovalRow | null>;
  getByInvocation(tenantId: string, invocationId: string): Promise<ApprovalRow | null>;
  /** Pending approvals, oldest first. */
  listPending(tenantId: string, limit: number): Promise<ApprovalRow[]>;
  /** PENDING -> APPROVED | DENIED, once (InvalidTransitionError afterwards). */
  decide(tenantId: string, approvalId: string, decision: ApprovalDecision, events: readonly NewEvent[]): Promise<ApprovalRow>;
}

/** Artifact metadata; the bytes live in a blob store (a folder by default), not here. */
export interface ArtifactRow {
  readonly id: string;
  readonly tenantId: string;
  readonly runId: string;
  readonly invocationId: string | null;
  readonly mediaType: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly trust: TrustLevel;
  readonly createdAt: Date;
}

export interface NewArtifact {
  readonly id: string;
  readonly runId: string;
  readonly invocationId: string | null;
  readonly mediaType: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly trust: TrustLevel;
  readonly createdAt: Date;
}

export interface ArtifactStore {
  insert(tenantId: string, artifact: NewArtifact): Promise<ArtifactRow>;
  get(tenantId: string, artifactId: string): Promise<ArtifactRow | null>;
  listForRun(tenantId: string, runId: string): Promise<ArtifactRow[]>;
}

export interface SkillRow {
  readonly id: string;
  readonly tenantId: string;
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly requiredTools: string[];
  readonly content: string;
  readonly trust: TrustLevel;
  /** Who wrote it: e.g. 'operator', 'user', 'agent'. */
  readonly source: string;
  readonly createdAt: Date;
}

export type NewSkill = Omit<SkillRow, 'id' | 'tenantId'> & { readonly id?: string };

export interface SkillStore {
  /** UNIQUE(tenant_id, name, version): a duplicate is `store.unique_violation`. */
  create(tenantId: string, skill: NewSkill): Promise<SkillRow>;
  /** Without a version: the most recently created version. */
  get(tenantId: string, name: string, version?: string): Promise<SkillRow | null>;
  list(tenantId: string): Promise<SkillRow[]>;
  /** Every version of the name; returns how many rows went. */
  delete(tenantId: string, name: string): Promise<number>;
}

// ---------------------------------------------------------------------------------------
// MCP servers and the catalog history (§ Schema additions)

export type McpTransport = 'stdio' | 'http';
export type McpAuthScheme = 'none' | 'bearer' | 'header' | 'oauth2_client' | 'env';

export interface McpServerRow {
  readonly id: string;
  readonly tenantId: string;
  readonly serverId: string;
  readonly transport: McpTransport;
  readonly endpoint: string;
  readonly authScheme: McpAuthScheme;
  readonly authName: string | null;
  /** A broker reference, never a secret. */
  readonly credentialRef: string | null;
  readonly tokenEndpoint: string | null;
  readonly tokenScopes: string[] | null;
  readonly sideEffect: SideEffectClass;
  readonly risk: RiskLevel;
  readonly idempotency: IdempotencyClass;
  readonly requiredScopes: string[];
  readonly timeoutSeconds: number;
  readonly maximumOutputBytes: number;
  readonly enabled: boolean;
  readonly createdAt: Date;
}

export type NewMcpServer = Omit<McpServerRow, 'id' | 'tenantId' | 'enabled'> & { readonly id?: string; readonly enabled?: boolean };

export interface McpServerStore {
  /** UNIQUE(tenant_id, server_id): a duplicate is `store.unique_violation`. */
  create(tenantId: string, server: NewMcpServer): Promise<McpServerRow>;
  get(tenantId: string, serverId: string): Promise<McpServerRow | null>;
  list(tenantId: string): Promise<McpServerRow[]>;
  setEnabled(tenantId: string, serverId: string, enabled: boolean): Promise<McpServerRow>;
}

/**
 * A tenant's secret (ADR 0017): sealed with AES-256-GCM before it reaches the store, so the
 * store holds bytes it cannot read. `ciphertext` is `nonce ‖ tag ‖ ciphertext`; `keyId` names
 * the key that sealed it (rotation).
 */
export interface TenantSecretRow {
  readonly tenantId: string;
  readonly name: string;
  readonly ciphertext: Uint8Array;
  readonly keyId: string;
  readonly createdAt: Date;
  /** The last time the value was replaced; null until then. */
  readonly rotatedAt: Date | null;
}

/** What a tenant may read back about its secrets: never the value, never the ciphertext. */
export type TenantSecretSummary = Pick<TenantSecretRow, 'name' | 'createdAt' | 'rotatedAt'>;

export interface PutTenantSecret {
  readonly name: string;
  readonly ciphertext: Uint8Array;
  readonly keyId: string;
  readonly at: Date;
}

export interface TenantSecretStore {
  /** Insert, or replace the value (rotated_at = at). `created` says which. */
  put(tenantId: string, secret: PutTenantSecret): Promise<{ readonly created: boolean; readonly secret: TenantSecretSummary }>;
  /** The sealed row, for the broker only (never for an API response). */
  get(tenantId: string, name: string): Promise<TenantSecretRow | null>;
  has(tenantId: string, name: string): Promise<boolean>;
  /** Ordered by name. */
  list(tenantId: string): Promise<TenantSecretSummary[]>;
  /** True when a row was deleted. */
  delete(tenantId: string, name: string): Promise<boolean>;
  /**
   * Key rotation (maintenance, across tenants): which secrets are sealed with a key other than
   * `keyId`. Identity columns only, never the ciphertext.
   */
  listNotSealedWith(keyId: string): Promise<{ readonly tenantId: string; readonly name: string; readonly keyId: string }[]>;
  /**
   * Replace the sealed bytes of one secret, only if it is still sealed with `fromKeyId` (a
   * concurrent PUT wins); rotated_at is not changed (the value is the same). True when replaced.
   */
  reseal(tenantId: string, name: string, fromKeyId: string, sealed: { readonly ciphertext: Uint8Array; readonly keyId: string }): Promise<boolean>;
}

export interface McpCatalogRow {
  readonly id: string;
  readonly tenantId: string;
  readonly serverId: string;
  readonly catalogHash: string;
  readonly remoteName: string;
  readonly registryName: string;
  readonly inputSchema: Record<string, unknown>;
  readonly discoveredAt: Date;
  readonly withdrawnAt: Date | null;
}

export interface McpCatalogGeneration {
  readonly serverId: string;
  /** sha256 over the sorted tool declarations. */
  readonly catalogHash: string;
  readonly discoveredAt: Date;
  readonly tools: readonly {
    readonly remoteName: string;
    readonly registryName: string;
    readonly inputSchema: Record<string, unknown>;
  }[];
}

/** § Schema additions: a history, not a cache. Rows are never updated except withdrawn_at. */
export interface McpCatalogStore {
  /**
   * Write a discovery. A generation already recorded is returned as stored (no new rows). Names
   * present in earlier generations but absent here get withdrawn_at = discoveredAt.
   */
  recordGeneration(tenantId: string, generation: McpCatalogGeneration): Promise<McpCatalogRow[]>;
  /**
   * ADR-0131: one preparation's catalog generations (each as recordGeneration writes it) and its
   * events (as EventStore.append writes them) in ONE tenant transaction, so a failure commits
   * none of them.
   */
  recordPreparation(tenantId: string, generations: readonly McpCatalogGeneration[], events: readonly NewEvent[]): Promise<void>;
  getGeneration(tenantId: string, serverId: string, catalogHash: string): Promise<McpCatalogRow[]>;
  /** The most recently discovered generation of a server, or []. */
  latest(tenantId: string, serverId: string): Promise<McpCatalogRow[]>;
}

// ---------------------------------------------------------------------------------------
// Tenants and API keys

export interface TenantRow {
  readonly id: string;
  readonly name: string;
  readonly createdAt: Date;
}

/** Operator surface: tenants are created by the platform, not by a tenant. */
export interface TenantStore {
  /** Idempotent on id. */
  create(tenant: TenantRow): Promise<TenantRow>;
  /** Read as the tenant itself: a tenant sees only its own row. */
  get(tenantId: string): Promise<TenantRow | null>;
}

export interface ApiKeyRow {
  readonly id: string;
  readonly tenantId: string;
  /** sha256 of the key; the key itself is never stored. */
  readonly keyHash: string;
  /** The first characters of the key, to recognise it in a list. */
  readonly prefix: string;
  readonly principalId: string;
  readonly scopes: string[];
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
}

export type NewApiKey = Omit<ApiKeyRow, 'id' | 'tenantId' | 'revokedAt'> & { readonly id?: string };

export interface ApiKeyStore {
  create(tenantId: string, key: NewApiKey): Promise<ApiKeyRow>;
  /** Authentication happens before the tenant is known: this lookup runs across tenants. Revoked keys are returned too; the caller checks revokedAt. */
  findByHash(keyHash: string): Promise<ApiKeyRow | null>;
  revoke(tenantId: string, keyId: string, at: Date): Promise<ApiKeyRow>;
}

/** Every store of one database. */
export interface Stores {
  readonly tenants: TenantStore;
  readonly apiKeys: ApiKeyStore;
  readonly sessions: SessionStore;
  readonly runs: RunStore;
  readonly steps: StepStore;
  readonly invocations: InvocationStore;
  readonly approvals: ApprovalStore;
  readonly events: EventStore;
  readonly artifacts: ArtifactStore;
  readonly skills: SkillStore;
  readonly mcpServers: McpServerStore;
  readonly mcpCatalog: McpCatalogStore;
  readonly tenantSecrets: TenantSecretStore;
}
