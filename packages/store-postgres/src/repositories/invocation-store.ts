import type {
  ApprovalPolicy,
  ApprovalRow,
  BreakerTally,
  InsertIntentResult,
  InvocationRow,
  InvocationStore,
  InvocationSuspension,
  InvocationTerminal,
  LeaseFence,
  NewEvent,
  NewInvocation,
  StepRange,
} from '@veetbot/ports';
import { and, asc, desc, eq, inArray, isNull, lte, or } from 'drizzle-orm';
import type { Database } from '../database';
import { runs, toolInvocations } from '../schema';
import { approvalFromJson, eventsArguments, hot, newRowJson, parsed, rowFromJson, tallyFromJson, terminalJson } from './hot-path';

/**
 * Every transition of a tool_invocations row is one SQL function of sql/functions, called as
 * one statement (ADR 0027): fencing, the guarded update, the approval, deduplication and the
 * event append exist there only. The functions raise the SQLSTATEs src/classify-error.ts turns
 * into FencingError, InvalidTransitionError and StoreError.
 */
export class PostgresInvocationStore implements InvocationStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  async insertIntent(tenantId: string, row: NewInvocation, events: readonly NewEvent[]): Promise<InsertIntentResult> {
    // sql/functions/veetbot_insert_intent.sql: the unique key decides; a row stored waiting for
    // approval opens its approval in the same statement.
    const [result] = await this.#db.statement(
      hot('veetbot_insert_intent', [tenantId, newRowJson(tenantId, row), ...eventsArguments(events)]),
    );
    const { inserted, row: stored } = parsed(result?.result) as { inserted: boolean; row: unknown };
    return inserted ? { inserted: true, row: rowFromJson(stored) } : { inserted: false, existing: rowFromJson(stored) };
  }

  async setWaitingForApproval(
    tenantId: string,
    invocationId: string,
    fence: LeaseFence,
    requestedAt: Date,
    policy: ApprovalPolicy,
    events: readonly NewEvent[],
  ): Promise<{ row: InvocationRow; approval: ApprovalRow }> {
    // sql/functions/veetbot_wait_for_approval.sql: fence, PROPOSED, AUTHORIZED or RUNNING
    // (unsuspended; docs/adr/0023) -> WAITING_FOR_APPROVAL, the approval, the events.
    const [result] = await this.#db.statement(
      hot('veetbot_wait_for_approval', [
        tenantId,
        invocationId,
        fence.runId,
        fence.fencingToken,
        requestedAt.toISOString(),
        policy.version,
        policy.ruleId,
        ...eventsArguments(events),
      ]),
    );
    const { row, approval } = parsed(result?.result) as { row: unknown; approval: unknown };
    return { row: rowFromJson(row), approval: approvalFromJson(approval) };
  }

  async authorize(tenantId: string, invocationId: string, fence: LeaseFence, events: readonly NewEvent[]): Promise<InvocationRow> {
    // sql/functions/veetbot_authorize.sql: from PROPOSED, or WAITING_FOR_APPROVAL with an approved approval.
    const [result] = await this.#db.statement(
      hot('veetbot_authorize', [tenantId, invocationId, fence.runId, fence.fencingToken, ...eventsArguments(events)]),
    );
    return rowFromJson(parsed(result?.result));
  }

  async claim(
    tenantId: string,
    invocationId: string,
    fence: LeaseFence,
    startedAt: Date,
    events: readonly NewEvent[],
  ): Promise<InvocationRow> {
    // sql/functions/veetbot_claim.sql: fence, authorized -> running (attempt 1) or a re-claim of
    // a running, unsuspended row (same key, next attempt), the events; one statement.
    const [result] = await this.#db.statement(
      hot('veetbot_claim', [tenantId, invocationId, fence.runId, fence.fencingToken, startedAt.toISOString(), ...eventsArguments(events)]),
    );
    return rowFromJson(parsed(result?.result));
  }

  async markEffectSent(tenantId: string, invocationId: string, fence: LeaseFence, at: Date): Promise<Date> {
    // § The effect watermark: its own short transaction (one statement), committed before the
    // effect; a second mark returns the first (sql/functions/veetbot_mark_effect_sent.sql).
    const [result] = await this.#db.statement(
      hot('veetbot_mark_effect_sent', [tenantId, invocationId, fence.runId, fence.fencingToken, at.toISOString()]),
    );
    const { effect_sent_at: effectSentAt } = parsed(result?.result) as { effect_sent_at: string };
    return new Date(effectSentAt);
  }

  async suspend(
    tenantId: string,
    invocationId: string,
    fence: LeaseFence,
    suspension: InvocationSuspension,
    events: readonly NewEvent[],
  ): Promise<InvocationRow> {
    // sql/functions/veetbot_suspend.sql: a RUNNING, unsuspended row waits (§ Control tools).
    const [result] = await this.#db.statement(
      hot('veetbot_suspend', [
        tenantId,
        invocationId,
        fence.runId,
        fence.fencingToken,
        suspension.kind,
        suspension.ref,
        ...eventsArguments(events),
      ]),
    );
    return rowFromJson(parsed(result?.result));
  }

  async complete(
    tenantId: string,
    invocationId: string,
    fence: LeaseFence,
    terminal: InvocationTerminal,
    events: readonly NewEvent[],
  ): Promise<InvocationRow> {
    // sql/functions/veetbot_complete.sql: fence, refuse a terminal row (the recorded outcome
    // stands), write the outcome and the events; one statement.
    const [result] = await this.#db.statement(
      hot('veetbot_complete', [
        tenantId,
        invocationId,
        fence.runId,
        fence.fencingToken,
        terminalJson(terminal),
        ...eventsArguments(events),
      ]),
    );
    return rowFromJson(parsed(result?.result));
  }

  getById(tenantId: string, invocationId: string): Promise<InvocationRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx.select().from(toolInvocations).where(eq(toolInvocations.id, invocationId));
      return row ?? null;
    });
  }

  getByKey(tenantId: string, idempotencyKey: string): Promise<InvocationRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx.select().from(toolInvocations).where(eq(toolInvocations.idempotencyKey, idempotencyKey));
      return row ?? null;
    });
  }

  async listForRun(tenantId: string, runId: string, steps: StepRange = {}): Promise<InvocationRow[]> {
    // One statement (sql/functions/veetbot_list_invocations.sql; docs/adr/0049).
    const [result] = await this.#db.statement(hot('veetbot_list_invocations', [tenantId, runId, steps.from ?? null, steps.to ?? null]));
    return (parsed(result?.result) as unknown[]).map(rowFromJson);
  }

  async breakerTally(tenantId: string, runId: string, steps: StepRange = {}): Promise<BreakerTally> {
    // One statement (sql/functions/veetbot_breaker_tally.sql): counted by the database, not read row by row.
    const [result] = await this.#db.statement(hot('veetbot_breaker_tally', [tenantId, runId, steps.from ?? null, steps.to ?? null]));
    return tallyFromJson(result?.result);
  }

  /**
   * The sweep runs across tenants in two phases. Phase 1, as veetbot_maintenance (read-only,
   * cross-tenant, granted identity columns only): which invocations are candidates. Phase 2,
   * per tenant under row-level security: the full rows, with the predicate checked again.
   * The maintenance role therefore never reads arguments, results or errors.
   */
  async findExpiredRunning(now: Date, limit: number): Promise<InvocationRow[]> {
    const candidates = await this.#db.transaction({ role: 'maintenance' }, (tx) =>
      tx
        .select({ id: toolInvocations.id, tenantId: toolInvocations.tenantId })
        .from(toolInvocations)
        .innerJoin(runs, and(eq(runs.id, toolInvocations.runId), eq(runs.tenantId, toolInvocations.tenantId)))
        .where(expiredRunning(now))
        .orderBy(asc(toolInvocations.startedAt), asc(toolInvocations.id))
        .limit(limit),
    );
    const byTenant = new Map<string, string[]>();
    for (const candidate of candidates) {
      const ids = byTenant.get(candidate.tenantId) ?? [];
      ids.push(candidate.id);
      byTenant.set(candidate.tenantId, ids);
    }
    const found = new Map<string, InvocationRow>();
    for (const [tenantId, ids] of byTenant) {
      const rows = await this.#db.tenant(tenantId, (tx) =>
        tx
          .select({ row: toolInvocations })
          .from(toolInvocations)
          .innerJoin(runs, eq(runs.id, toolInvocations.runId))
          .where(and(inArray(toolInvocations.id, ids), expiredRunning(now))),
      );
      for (const { row } of rows) found.set(row.id, row);
    }
    return candidates.flatMap((candidate) => {
      const row = found.get(candidate.id);
      return row ? [row] : [];
    });
  }

  findUncertainRepeat(tenantId: string, runId: string, toolName: string, argumentsHash: string): Promise<InvocationRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx
        .select()
        .from(toolInvocations)
        .where(
          and(
            eq(toolInvocations.runId, runId),
            eq(toolInvocations.toolName, toolName),
            eq(toolInvocations.argumentsHash, argumentsHash),
            eq(toolInvocations.status, 'uncertain'),
          ),
        )
        .orderBy(desc(toolInvocations.createdAt))
        .limit(1);
      return row ?? null;
    });
  }
}

/** RUNNING, not suspended, and the run's lease expired or released (§ Control tools). */
function expiredRunning(now: Date) {
  return and(
    eq(toolInvocations.status, 'running'),
    isNull(toolInvocations.suspendedKind),
    or(isNull(runs.leaseOwner), isNull(runs.leaseExpiresAt), lte(runs.leaseExpiresAt, now)),
  );
}
