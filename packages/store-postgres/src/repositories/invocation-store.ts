import { FencingError, InvalidTransitionError, type InvocationStatus, StoreError } from '@veetbot/domain';
import type {
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
import { and, asc, desc, eq, gte, inArray, isNull, lte, or, type SQL, sql } from 'drizzle-orm';
import type { Database, Tx } from '../database';
import { approvals, runs, toolInvocations } from '../schema';
import { appendEventsInTx } from './event-writer';
import { assertFence, notFound } from './fence';
import { eventsArguments, hot, newRowJson, parsed, rowFromJson, tallyFromJson, terminalJson } from './hot-path';

export class PostgresInvocationStore implements InvocationStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  async insertIntent(tenantId: string, row: NewInvocation, events: readonly NewEvent[]): Promise<InsertIntentResult> {
    // A row that waits for approval also writes its approval: the transaction path below.
    if (row.status === 'waiting_for_approval') return this.#insertIntentInTransaction(tenantId, row, events);
    // One round trip: veetbot_insert_intent (migrations/0007) does the same as the path below.
    const [result] = await this.#db.statement(hot('veetbot_insert_intent', [tenantId, newRowJson(tenantId, row), ...eventsArguments(events)]));
    const { inserted, row: stored } = parsed(result?.['result']) as { inserted: boolean; row: unknown };
    return inserted ? { inserted: true, row: rowFromJson(stored) } : { inserted: false, existing: rowFromJson(stored) };
  }

  #insertIntentInTransaction(tenantId: string, row: NewInvocation, events: readonly NewEvent[]): Promise<InsertIntentResult> {
    return this.#db.tenant(tenantId, async (tx) => {
      // § Deduplication on the way in: the unique key decides. ON CONFLICT DO NOTHING waits for
      // a concurrent insert of the same key to commit or roll back, then yields no row; the
      // transaction stays usable, so the existing row is read in the same transaction.
      const [created] = await tx
        .insert(toolInvocations)
        .values({ ...row, tenantId })
        .onConflictDoNothing({ target: toolInvocations.idempotencyKey })
        .returning();
      if (created) {
        if (created.status === 'waiting_for_approval') await requestApproval(tx, tenantId, created, row.createdAt);
        await appendEventsInTx(tx, tenantId, events);
        return { inserted: true, row: created };
      }
      const [existing] = await tx.select().from(toolInvocations).where(eq(toolInvocations.idempotencyKey, row.idempotencyKey));
      // The key is held by a row this tenant cannot see. Keys embed the run id, so this is a
      // forged or corrupt key, never a legitimate duplicate; say nothing about the other row.
      if (!existing) throw new StoreError('store.conflict', 'The idempotency key is not available.');
      return { inserted: false, existing };
    });
  }

  setWaitingForApproval(
    tenantId: string,
    invocationId: string,
    fence: LeaseFence,
    requestedAt: Date,
    events: readonly NewEvent[],
  ): Promise<{ row: InvocationRow; approval: ApprovalRow }> {
    return this.#db.tenant(tenantId, async (tx) => {
      const current = await lockForFencedWrite(tx, invocationId, fence);
      // RUNNING too (unsuspended): step 10's pre-effect re-check can ask for a person before the
      // effect (docs/adr/0023). Its watermark, if a replayed attempt has one, stays.
      const running = current.status === 'running' && current.suspendedKind === null;
      if (current.status !== 'proposed' && current.status !== 'authorized' && !running) {
        throw new InvalidTransitionError('wait for approval', current.status);
      }
      const row = await update(tx, invocationId, { status: 'waiting_for_approval' });
      const approval = await requestApproval(tx, tenantId, row, requestedAt);
      await appendEventsInTx(tx, tenantId, events);
      return { row, approval };
    });
  }

  authorize(tenantId: string, invocationId: string, fence: LeaseFence, events: readonly NewEvent[]): Promise<InvocationRow> {
    return this.#db.tenant(tenantId, async (tx) => {
      const current = await lockForFencedWrite(tx, invocationId, fence);
      if (current.status === 'waiting_for_approval') {
        // Approval re-enters at step 6; only an approved record lets step 8 authorize.
        const [approval] = await tx.select({ status: approvals.status }).from(approvals).where(eq(approvals.invocationId, invocationId));
        if (approval?.status !== 'approved') {
          throw new InvalidTransitionError('authorize without an approved approval', current.status);
        }
      } else if (current.status !== 'proposed') {
        throw new InvalidTransitionError('authorize', current.status);
      }
      const row = await update(tx, invocationId, { status: 'authorized' });
      await appendEventsInTx(tx, tenantId, events);
      return row;
    });
  }

  async claim(tenantId: string, invocationId: string, fence: LeaseFence, startedAt: Date, events: readonly NewEvent[]): Promise<InvocationRow> {
    // veetbot_claim (migrations/0007): fence, lock, authorized -> running (attempt 1) or a
    // re-claim of a running, unsuspended row (same key, next attempt), the events; one statement.
    const [result] = await this.#db.statement(
      hot('veetbot_claim', [tenantId, invocationId, fence.runId, fence.fencingToken, startedAt.toISOString(), ...eventsArguments(events)]),
    );
    return rowFromJson(parsed(result?.['result']));
  }

  async markEffectSent(tenantId: string, invocationId: string, fence: LeaseFence, at: Date): Promise<Date> {
    // § The effect watermark: its own short transaction (one statement), committed before the
    // effect; a second mark returns the first (veetbot_mark_effect_sent, migrations/0007).
    const [result] = await this.#db.statement(hot('veetbot_mark_effect_sent', [tenantId, invocationId, fence.runId, fence.fencingToken, at.toISOString()]));
    const { effect_sent_at: effectSentAt } = parsed(result?.['result']) as { effect_sent_at: string };
    return new Date(effectSentAt);
  }

  suspend(
    tenantId: string,
    invocationId: string,
    fence: LeaseFence,
    suspension: InvocationSuspension,
    events: readonly NewEvent[],
  ): Promise<InvocationRow> {
    return this.#db.tenant(tenantId, async (tx) => {
      const current = await lockForFencedWrite(tx, invocationId, fence);
      if (current.status !== 'running' || current.suspendedKind !== null) throw new InvalidTransitionError('suspend', current.status);
      const row = await update(tx, invocationId, { suspendedKind: suspension.kind, suspendedRef: suspension.ref });
      await appendEventsInTx(tx, tenantId, events);
      return row;
    });
  }

  async complete(
    tenantId: string,
    invocationId: string,
    fence: LeaseFence,
    terminal: InvocationTerminal,
    events: readonly NewEvent[],
  ): Promise<InvocationRow> {
    // veetbot_complete (migrations/0007): fence, lock, refuse a terminal row (the recorded
    // outcome stands), write the outcome and the events; one statement.
    const [result] = await this.#db.statement(
      hot('veetbot_complete', [tenantId, invocationId, fence.runId, fence.fencingToken, terminalJson(terminal), ...eventsArguments(events)]),
    );
    return rowFromJson(parsed(result?.['result']));
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

  listForRun(tenantId: string, runId: string, steps: StepRange = {}): Promise<InvocationRow[]> {
    return this.#db.tenant(tenantId, (tx) =>
      tx
        .select()
        .from(toolInvocations)
        .where(and(eq(toolInvocations.runId, runId), ...stepBounds(steps)))
        .orderBy(asc(toolInvocations.stepNumber), asc(toolInvocations.createdAt), asc(toolInvocations.callId)),
    );
  }

  async breakerTally(tenantId: string, runId: string, steps: StepRange = {}): Promise<BreakerTally> {
    // One statement (migrations/0012): counted by the database, not read row by row.
    const [result] = await this.#db.statement(hot('veetbot_breaker_tally', [tenantId, runId, steps.from ?? null, steps.to ?? null]));
    return tallyFromJson(result?.['result']);
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

/** The inclusive step_number bounds that are given. */
function stepBounds(steps: StepRange): SQL[] {
  const bounds: SQL[] = [];
  if (steps.from !== undefined) bounds.push(gte(toolInvocations.stepNumber, steps.from));
  if (steps.to !== undefined) bounds.push(lte(toolInvocations.stepNumber, steps.to));
  return bounds;
}

/** RUNNING, not suspended, and the run's lease expired or released (§ Control tools). */
function expiredRunning(now: Date) {
  return and(
    eq(toolInvocations.status, 'running'),
    isNull(toolInvocations.suspendedKind),
    or(isNull(runs.leaseOwner), isNull(runs.leaseExpiresAt), lte(runs.leaseExpiresAt, now)),
  );
}

/** Fence first (locks the run row), then lock the invocation row for this transaction. */
async function lockForFencedWrite(tx: Tx, invocationId: string, fence: LeaseFence): Promise<InvocationRow> {
  await assertFence(tx, fence);
  const [current] = await tx.select().from(toolInvocations).where(eq(toolInvocations.id, invocationId)).for('update');
  if (!current) throw notFound('The invocation');
  // A fence is for one run: it does not authorize writes to another run's invocations.
  if (current.runId !== fence.runId) throw new FencingError(fence.runId);
  return current;
}

async function update(tx: Tx, invocationId: string, values: Partial<typeof toolInvocations.$inferInsert>): Promise<InvocationRow> {
  const [row] = await tx.update(toolInvocations).set(values).where(eq(toolInvocations.id, invocationId)).returning();
  if (!row) throw notFound('The invocation');
  return row;
}

/** One approval per invocation: an existing one is resumed, never duplicated. */
async function requestApproval(tx: Tx, tenantId: string, row: InvocationRow, requestedAt: Date): Promise<ApprovalRow> {
  const [created] = await tx
    .insert(approvals)
    .values({ tenantId, invocationId: row.id, runId: row.runId, status: 'pending', requestedAt })
    .onConflictDoNothing({ target: approvals.invocationId })
    .returning();
  if (created) return created;
  const [existing] = await tx.select().from(approvals).where(eq(approvals.invocationId, row.id));
  if (!existing) throw notFound('The approval');
  return existing;
}
