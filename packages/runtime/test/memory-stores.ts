import { FencingError, InvalidTransitionError, isTerminalInvocationStatus, StoreError } from '@veetbot/domain';
import type {
  AcquiredLease,
  AcquiredRunLease,
  ApprovalRow,
  ApprovalStore,
  BreakerTally,
  BreakerTallyGroup,
  EventRow,
  EventStore,
  InvocationRow,
  InvocationStore,
  LeaseFence,
  NewEvent,
  RunRow,
  RunStore,
  SessionRow,
  SessionStore,
  StepRow,
  StepContext,
  StepRange,
  StepStore,
  Stores,
} from '@veetbot/ports';

/** What InvocationStore.breakerTally returns for these rows: identical (key, outcome) rows counted together. */
export function tallyOf(rows: Iterable<Omit<BreakerTallyGroup, 'count'>>): BreakerTally {
  const groups = new Map<string, BreakerTallyGroup>();
  for (const { toolName, argumentsHash, status, outcomeStatus, reasonCode } of rows) {
    const key = JSON.stringify([toolName, argumentsHash, status, outcomeStatus, reasonCode]);
    const count = (groups.get(key)?.count ?? 0) + 1;
    groups.set(key, { toolName, argumentsHash, status, outcomeStatus, reasonCode, count });
  }
  const list = [...groups.values()];
  return { rows: list.reduce((sum, g) => sum + g.count, 0), groups: list };
}

/*
 * In-memory fakes of the store ports, faithful to the contract in ports/src/stores.ts where
 * the runtime depends on it: tenant isolation (another tenant's row is null), the fencing
 * token, the status transitions, dedup on idempotency_key and on (run, step). The real
 * PostgreSQL stores are exercised by apps/integration-tests/test/runtime-*.test.ts.
 */

const notFound = (what: string) => new StoreError('store.not_found', `${what} does not exist.`);
const copy = <T extends object>(row: T): T => ({ ...row });
/** jsonb round trip: what comes back is a fresh, key-reordered document. */
const jsonb = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

class Runs implements RunStore {
  readonly rows = new Map<string, RunRow>();

  async create(tenantId: string, run: Parameters<RunStore['create']>[1]): Promise<RunRow> {
    const row: RunRow = {
      id: run.id ?? crypto.randomUUID(),
      tenantId,
      sessionId: run.sessionId,
      parentRunId: run.parentRunId ?? null,
      status: 'running',
      deadlineAt: run.deadlineAt,
      budgets: jsonb(run.budgets) as Record<string, unknown>,
      leaseOwner: null,
      leaseExpiresAt: null,
      fencingToken: 0,
      createdAt: run.createdAt,
      finishedAt: null,
      failureReason: null,
    };
    this.rows.set(row.id, row);
    return copy(row);
  }

  async get(tenantId: string, runId: string): Promise<RunRow | null> {
    const row = this.rows.get(runId);
    return row && row.tenantId === tenantId ? copy(row) : null;
  }

  async acquireLease(tenantId: string, runId: string, owner: string, ttlMs: number, now: Date): Promise<AcquiredRunLease | null> {
    const row = this.rows.get(runId);
    if (!row || row.tenantId !== tenantId) throw notFound('The run');
    const free = row.leaseOwner === null || row.leaseExpiresAt === null || row.leaseOwner === owner || row.leaseExpiresAt.getTime() <= now.getTime();
    if (!free) return null;
    const next = { ...row, leaseOwner: owner, leaseExpiresAt: new Date(now.getTime() + ttlMs), fencingToken: row.fencingToken + 1 };
    this.rows.set(runId, next);
    return { fencingToken: next.fencingToken, leaseExpiresAt: next.leaseExpiresAt, run: copy(next) };
  }

  async renewLease(tenantId: string, fence: LeaseFence, ttlMs: number, now: Date): Promise<AcquiredLease> {
    const row = this.check(tenantId, fence);
    const next = { ...row, leaseExpiresAt: new Date(now.getTime() + ttlMs) };
    this.rows.set(row.id, next);
    return { fencingToken: next.fencingToken, leaseExpiresAt: next.leaseExpiresAt };
  }

  async releaseLease(tenantId: string, fence: LeaseFence): Promise<boolean> {
    try {
      const row = this.check(tenantId, fence);
      this.rows.set(row.id, { ...row, leaseOwner: null, leaseExpiresAt: null });
      return true;
    } catch {
      return false;
    }
  }

  async setStatus(tenantId: string, runId: string, status: RunRow['status'], at: Date, failureReason?: RunRow['failureReason']): Promise<RunRow> {
    const row = this.rows.get(runId);
    if (!row || row.tenantId !== tenantId) throw notFound('The run');
    const terminal = status === 'succeeded' || status === 'failed' || status === 'cancelled';
    const next = { ...row, status, ...(terminal ? { finishedAt: at } : {}), failureReason: status === 'failed' ? (failureReason ?? null) : null };
    this.rows.set(runId, next);
    return copy(next);
  }

  /** The fence: the token matches and a lease is held. */
  check(tenantId: string, fence: LeaseFence): RunRow {
    const row = this.rows.get(fence.runId);
    if (!row || row.tenantId !== tenantId || row.fencingToken !== fence.fencingToken || row.leaseOwner === null) throw new FencingError(fence.runId);
    return row;
  }
}

class Steps implements StepStore {
  readonly rows = new Map<string, StepRow>();
  constructor(
    private readonly runs: Runs,
    private readonly sessions: Sessions,
  ) {}
  async getWithContext(tenantId: string, runId: string, stepNumber: number): Promise<StepContext | null> {
    const step = await this.get(tenantId, runId, stepNumber);
    if (step === null) return null;
    const run = await this.runs.get(tenantId, runId);
    return { step, run, session: run === null ? null : await this.sessions.get(tenantId, run.sessionId) };
  }
  async insert(tenantId: string, step: Parameters<StepStore['insert']>[1]) {
    const key = `${step.runId}:${step.stepNumber}`;
    const existing = this.rows.get(key);
    if (existing) return { inserted: false as const, existing: copy(existing) };
    const row: StepRow = { id: crypto.randomUUID(), tenantId, runId: step.runId, stepNumber: step.stepNumber, batch: jsonb(step.batch), status: step.status ?? 'pending', createdAt: step.createdAt };
    this.rows.set(key, row);
    return { inserted: true as const, row: copy(row) };
  }
  async get(tenantId: string, runId: string, stepNumber: number): Promise<StepRow | null> {
    const row = this.rows.get(`${runId}:${stepNumber}`);
    return row && row.tenantId === tenantId ? copy(row) : null;
  }
  async setStatus(tenantId: string, runId: string, stepNumber: number, status: StepRow['status']): Promise<StepRow> {
    const row = this.rows.get(`${runId}:${stepNumber}`);
    if (!row || row.tenantId !== tenantId) throw notFound('The step');
    const next = { ...row, status };
    this.rows.set(`${runId}:${stepNumber}`, next);
    return copy(next);
  }
}

class Sessions implements SessionStore {
  readonly rows = new Map<string, SessionRow>();
  async create(tenantId: string, session: Parameters<SessionStore['create']>[1]): Promise<SessionRow> {
    const row: SessionRow = {
      id: session.id ?? crypto.randomUUID(),
      tenantId,
      principalId: session.principalId,
      agentId: session.agentId,
      toolNames: [...session.toolNames],
      specs: jsonb(session.specs) as SessionRow['specs'],
      toolSchemaSha256: session.toolSchemaSha256,
      status: 'open',
      createdAt: session.createdAt,
      closedAt: null,
    };
    this.rows.set(row.id, row);
    return copy(row);
  }
  async get(tenantId: string, sessionId: string): Promise<SessionRow | null> {
    const row = this.rows.get(sessionId);
    return row && row.tenantId === tenantId ? copy(row) : null;
  }
  async close(tenantId: string, sessionId: string, at: Date): Promise<SessionRow> {
    const row = this.rows.get(sessionId);
    if (!row || row.tenantId !== tenantId) throw notFound('The session');
    const next = row.status === 'closed' ? row : { ...row, status: 'closed' as const, closedAt: at };
    this.rows.set(sessionId, next);
    return copy(next);
  }
  async lifecycle(): Promise<never[]> {
    throw new Error('sessions.lifecycle is not used by the runtime (the MCP adapter reads it)');
  }
}

class Events implements EventStore {
  readonly rows: EventRow[] = [];
  async append(tenantId: string, events: readonly NewEvent[]): Promise<EventRow[]> {
    return events.map((event) => {
      const existing = this.rows.find((r) => r.tenantId === tenantId && r.derivationKey === event.derivationKey);
      if (existing) return existing;
      const sequence = this.rows.filter((r) => r.tenantId === tenantId && r.runId === event.runId).length + 1;
      const row: EventRow = { id: crypto.randomUUID(), tenantId, runId: event.runId, sequence, type: event.type, payload: { ...event.payload }, derivationKey: event.derivationKey, createdAt: event.createdAt };
      this.rows.push(row);
      return row;
    });
  }
  async listAfter(tenantId: string, runId: string | null, afterSequence: number, limit: number): Promise<EventRow[]> {
    return this.rows.filter((r) => r.tenantId === tenantId && r.runId === runId && r.sequence > afterSequence).slice(0, limit);
  }
}

class Approvals implements ApprovalStore {
  readonly rows = new Map<string, ApprovalRow>();
  constructor(private readonly events: Events) {}
  async get(tenantId: string, approvalId: string) {
    const row = this.rows.get(approvalId);
    return row && row.tenantId === tenantId ? copy(row) : null;
  }
  async getByInvocation(tenantId: string, invocationId: string) {
    const row = [...this.rows.values()].find((r) => r.tenantId === tenantId && r.invocationId === invocationId);
    return row ? copy(row) : null;
  }
  async listPending(tenantId: string, limit: number) {
    return [...this.rows.values()].filter((r) => r.tenantId === tenantId && r.status === 'pending').slice(0, limit);
  }
  async decide(tenantId: string, approvalId: string, decision: Parameters<ApprovalStore['decide']>[2], events: readonly NewEvent[]) {
    const row = this.rows.get(approvalId);
    if (!row || row.tenantId !== tenantId) throw notFound('The approval');
    if (row.status !== 'pending') throw new InvalidTransitionError('decide', row.status);
    const next: ApprovalRow = { ...row, status: decision.decision, decidedBy: decision.decidedBy, decidedAt: decision.decidedAt };
    this.rows.set(approvalId, next);
    await this.events.append(tenantId, events);
    return copy(next);
  }
  open(tenantId: string, row: InvocationRow, requestedAt: Date): ApprovalRow {
    // One approval per invocation: an existing one is kept, as the PostgreSQL store does.
    const existing = [...this.rows.values()].find((a) => a.tenantId === tenantId && a.invocationId === row.id);
    if (existing !== undefined) return existing;
    const approval: ApprovalRow = { id: crypto.randomUUID(), tenantId, invocationId: row.id, runId: row.runId, status: 'pending', requestedAt, decidedBy: null, decidedAt: null };
    this.rows.set(approval.id, approval);
    return approval;
  }
}

class Invocations implements InvocationStore {
  readonly rows: InvocationRow[] = [];
  constructor(
    private readonly runs: Runs,
    private readonly approvals: Approvals,
    private readonly events: Events,
  ) {}

  async insertIntent(tenantId: string, row: Parameters<InvocationStore['insertIntent']>[1], events: readonly NewEvent[]) {
    const existing = this.rows.find((r) => r.tenantId === tenantId && r.idempotencyKey === row.idempotencyKey);
    if (existing) return { inserted: false as const, existing: copy(existing) };
    const full: InvocationRow = {
      id: row.id ?? crypto.randomUUID(),
      tenantId,
      runId: row.runId,
      sessionId: row.sessionId,
      stepNumber: row.stepNumber,
      callId: row.callId,
      toolName: row.toolName,
      toolVersion: row.toolVersion,
      status: row.status,
      idempotencyKey: row.idempotencyKey,
      argumentsHash: row.argumentsHash,
      arguments: jsonb(row.arguments) as Record<string, unknown>,
      result: null,
      error: null,
      createdAt: row.createdAt,
      startedAt: null,
      finishedAt: null,
      toolSource: row.toolSource,
      serverId: row.serverId,
      idempotencyClass: row.idempotencyClass,
      effectSentAt: null,
      attemptNumber: 1,
      suspendedKind: null,
      suspendedRef: null,
      outputBytes: null,
      truncated: false,
      artifactId: null,
      outcomeStatus: null,
      reasonCode: null,
      originTrust: row.originTrust,
      parallelGroup: row.parallelGroup,
    };
    this.rows.push(full);
    if (full.status === 'waiting_for_approval') this.approvals.open(tenantId, full, row.createdAt);
    await this.events.append(tenantId, events);
    return { inserted: true as const, row: copy(full) };
  }

  async setWaitingForApproval(tenantId: string, invocationId: string, fence: LeaseFence, requestedAt: Date, events: readonly NewEvent[]) {
    this.runs.check(tenantId, fence);
    const row = this.find(tenantId, invocationId);
    const running = row.status === 'running' && row.suspendedKind === null;
    if (row.status !== 'proposed' && row.status !== 'authorized' && !running) throw new InvalidTransitionError('wait for approval', row.status);
    const next = this.replace(row, { status: 'waiting_for_approval' });
    const approval = this.approvals.open(tenantId, next, requestedAt);
    await this.events.append(tenantId, events);
    return { row: copy(next), approval: copy(approval) };
  }

  async authorize(tenantId: string, invocationId: string, fence: LeaseFence, events: readonly NewEvent[]) {
    this.runs.check(tenantId, fence);
    const row = this.find(tenantId, invocationId);
    if (row.status === 'waiting_for_approval') {
      const approval = await this.approvals.getByInvocation(tenantId, invocationId);
      if (approval?.status !== 'approved') throw new InvalidTransitionError('authorize', row.status);
    } else if (row.status !== 'proposed') throw new InvalidTransitionError('authorize', row.status);
    const next = this.replace(row, { status: 'authorized' });
    await this.events.append(tenantId, events);
    return copy(next);
  }

  async claim(tenantId: string, invocationId: string, fence: LeaseFence, startedAt: Date, events: readonly NewEvent[]) {
    this.runs.check(tenantId, fence);
    const row = this.find(tenantId, invocationId);
    if (row.status !== 'authorized' && !(row.status === 'running' && row.suspendedKind === null)) throw new InvalidTransitionError('claim', row.status);
    const next = this.replace(row, { status: 'running', startedAt, attemptNumber: row.status === 'running' ? row.attemptNumber + 1 : row.attemptNumber });
    await this.events.append(tenantId, events);
    return copy(next);
  }

  async markEffectSent(tenantId: string, invocationId: string, fence: LeaseFence, at: Date): Promise<Date> {
    this.runs.check(tenantId, fence);
    const row = this.find(tenantId, invocationId);
    if (row.status !== 'running') throw new InvalidTransitionError('mark effect sent', row.status);
    if (row.effectSentAt !== null) return row.effectSentAt;
    this.replace(row, { effectSentAt: at });
    return at;
  }

  async suspend(tenantId: string, invocationId: string, fence: LeaseFence, suspension: { kind: InvocationRow['suspendedKind'] & string; ref: string }, events: readonly NewEvent[]) {
    this.runs.check(tenantId, fence);
    const row = this.find(tenantId, invocationId);
    if (row.status !== 'running') throw new InvalidTransitionError('suspend', row.status);
    const next = this.replace(row, { suspendedKind: suspension.kind, suspendedRef: suspension.ref });
    await this.events.append(tenantId, events);
    return copy(next);
  }

  async complete(tenantId: string, invocationId: string, fence: LeaseFence, terminal: Parameters<InvocationStore['complete']>[3], events: readonly NewEvent[]) {
    this.runs.check(tenantId, fence);
    const row = this.find(tenantId, invocationId);
    if (isTerminalInvocationStatus(row.status)) throw new InvalidTransitionError('complete', row.status);
    const next = this.replace(row, {
      status: terminal.status,
      outcomeStatus: terminal.outcomeStatus,
      reasonCode: terminal.reasonCode,
      result: jsonb(terminal.result),
      error: terminal.error === null ? null : jsonb(terminal.error),
      outputBytes: terminal.outputBytes,
      truncated: terminal.truncated,
      artifactId: terminal.artifactId,
      finishedAt: terminal.finishedAt,
    });
    await this.events.append(tenantId, events);
    return copy(next);
  }

  async getById(tenantId: string, invocationId: string) {
    const row = this.rows.find((r) => r.tenantId === tenantId && r.id === invocationId);
    return row ? copy(row) : null;
  }
  async getByKey(tenantId: string, key: string) {
    const row = this.rows.find((r) => r.tenantId === tenantId && r.idempotencyKey === key);
    return row ? copy(row) : null;
  }
  async listForRun(tenantId: string, runId: string, steps: StepRange = {}) {
    return this.rows
      .filter((r) => r.tenantId === tenantId && r.runId === runId && r.stepNumber >= (steps.from ?? -Infinity) && r.stepNumber <= (steps.to ?? Infinity))
      .map((r, i) => ({ r, i }))
      .sort((a, b) => a.r.stepNumber - b.r.stepNumber || a.r.createdAt.getTime() - b.r.createdAt.getTime() || a.i - b.i)
      .map(({ r }) => copy(r));
  }
  async breakerTally(tenantId: string, runId: string, steps: StepRange = {}) {
    return tallyOf(await this.listForRun(tenantId, runId, steps));
  }
  async findExpiredRunning(now: Date, limit: number) {
    return this.rows
      .filter((r) => {
        if (r.status !== 'running' || r.suspendedKind !== null) return false;
        const run = this.runs.rows.get(r.runId);
        return run !== undefined && (run.leaseOwner === null || run.leaseExpiresAt === null || run.leaseExpiresAt.getTime() <= now.getTime());
      })
      .sort((a, b) => (a.startedAt?.getTime() ?? 0) - (b.startedAt?.getTime() ?? 0))
      .slice(0, limit)
      .map(copy);
  }
  async findUncertainRepeat(tenantId: string, runId: string, toolName: string, argumentsHash: string) {
    const row = this.rows.filter((r) => r.tenantId === tenantId && r.runId === runId && r.toolName === toolName && r.argumentsHash === argumentsHash && r.status === 'uncertain').at(-1);
    return row ? copy(row) : null;
  }

  private find(tenantId: string, invocationId: string): InvocationRow {
    const row = this.rows.find((r) => r.tenantId === tenantId && r.id === invocationId);
    if (!row) throw notFound('The invocation');
    return row;
  }
  private replace(row: InvocationRow, patch: Partial<InvocationRow>): InvocationRow {
    const next = { ...row, ...patch };
    this.rows[this.rows.indexOf(row)] = next;
    return next;
  }
}

const unused = (name: string) =>
  new Proxy(
    {},
    {
      get: (_, method) => () => {
        throw new Error(`${name}.${String(method)} is not used by the runtime`);
      },
    },
  );

export interface MemoryStores extends Stores {
  readonly runs: Runs;
  readonly steps: Steps;
  readonly invocations: Invocations;
  readonly events: Events;
  readonly approvals: Approvals;
}

export function memoryStores(): MemoryStores {
  const runs = new Runs();
  const sessions = new Sessions();
  const events = new Events();
  const approvals = new Approvals(events);
  return {
    runs,
    steps: new Steps(runs, sessions),
    sessions,
    events,
    approvals,
    invocations: new Invocations(runs, approvals, events),
    tenants: unused('tenants') as Stores['tenants'],
    apiKeys: unused('apiKeys') as Stores['apiKeys'],
    artifacts: unused('artifacts') as Stores['artifacts'],
    skills: unused('skills') as Stores['skills'],
    mcpServers: unused('mcpServers') as Stores['mcpServers'],
    mcpCatalog: unused('mcpCatalog') as Stores['mcpCatalog'],
    tenantSecrets: unused('tenantSecrets') as Stores['tenantSecrets'],
  };
}
