import { InvalidTransitionError } from '@veetbot/domain';
import type { InvocationRow, NewEvent, NewReview, ReconciliationAttempt, ReconciliationRow, ReconciliationStore } from '@veetbot/ports';
import { and, asc, eq, inArray, isNotNull, isNull, lte, or } from 'drizzle-orm';
import type { Database, Tx } from '../database';
import { invocationReconciliations, invocationReviews, toolInvocations } from '../schema';
import { appendEventsInTx } from './event-writer';
import { notFound } from './not-found';

/**
 * docs/adr/0063: the sweep's reconciliation attempts. Candidates are found across tenants as
 * veetbot_maintenance (identity columns only, like findExpiredRunning), then read in full per
 * tenant under row-level security with the same conditions.
 */
export class PostgresReconciliationStore implements ReconciliationStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  async findDue(now: Date, toolNames: readonly string[], limit: number): Promise<InvocationRow[]> {
    if (toolNames.length === 0 || limit <= 0) return [];
    const due = and(
      eq(toolInvocations.status, 'uncertain'),
      isNotNull(toolInvocations.effectSentAt),
      inArray(toolInvocations.toolName, [...toolNames]),
      isNull(invocationReviews.invocationId),
      or(isNull(invocationReconciliations.invocationId), lte(invocationReconciliations.nextAttemptAt, now)),
    );
    const candidates = await this.#db.transaction({ role: 'maintenance' }, (tx) =>
      tx
        .select({ id: toolInvocations.id, tenantId: toolInvocations.tenantId })
        .from(toolInvocations)
        .leftJoin(
          invocationReviews,
          and(eq(invocationReviews.tenantId, toolInvocations.tenantId), eq(invocationReviews.invocationId, toolInvocations.id)),
        )
        .leftJoin(
          invocationReconciliations,
          and(
            eq(invocationReconciliations.tenantId, toolInvocations.tenantId),
            eq(invocationReconciliations.invocationId, toolInvocations.id),
          ),
        )
        .where(due)
        .orderBy(asc(toolInvocations.finishedAt), asc(toolInvocations.id))
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
          .leftJoin(invocationReviews, eq(invocationReviews.invocationId, toolInvocations.id))
          .leftJoin(invocationReconciliations, eq(invocationReconciliations.invocationId, toolInvocations.id))
          .where(and(inArray(toolInvocations.id, ids), due)),
      );
      for (const { row } of rows) found.set(row.id, row);
    }
    return candidates.flatMap((candidate) => {
      const row = found.get(candidate.id);
      return row ? [row] : [];
    });
  }

  recordAttempt(tenantId: string, attempt: ReconciliationAttempt): Promise<ReconciliationRow> {
    return this.#db.tenant(tenantId, (tx) => upsert(tx, tenantId, attempt));
  }

  settle(tenantId: string, review: NewReview, attempt: ReconciliationAttempt, events: readonly NewEvent[]): Promise<void> {
    return this.#db.tenant(tenantId, async (tx) => {
      // The same checks as a person's resolution (PostgresReviewStore.record): FOR SHARE, so a
      // concurrent resolution waits here and then meets the unique key.
      const [invocation] = await tx
        .select({ status: toolInvocations.status, runId: toolInvocations.runId })
        .from(toolInvocations)
        .where(eq(toolInvocations.id, review.invocationId))
        .for('share');
      if (!invocation) throw notFound('The invocation');
      if (invocation.status !== 'uncertain') throw new InvalidTransitionError('resolve a review', invocation.status);
      const [created] = await tx
        .insert(invocationReviews)
        .values({ ...review, tenantId, runId: invocation.runId })
        .onConflictDoNothing({ target: invocationReviews.invocationId })
        .returning({ id: invocationReviews.id });
      if (!created) throw new InvalidTransitionError('resolve a review', 'reviewed');
      await upsert(tx, tenantId, attempt);
      await appendEventsInTx(tx, tenantId, events);
    });
  }

  get(tenantId: string, invocationId: string): Promise<ReconciliationRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx.select().from(invocationReconciliations).where(eq(invocationReconciliations.invocationId, invocationId));
      return row ?? null;
    });
  }
}

async function upsert(tx: Tx, tenantId: string, attempt: ReconciliationAttempt): Promise<ReconciliationRow> {
  const values = {
    reconciler: attempt.reconciler,
    attempts: attempt.attempts,
    nextAttemptAt: attempt.nextAttemptAt,
    lastOutcome: attempt.lastOutcome,
    lastEvidence: attempt.lastEvidence,
    updatedAt: attempt.at,
  };
  const [row] = await tx
    .insert(invocationReconciliations)
    .values({ tenantId, invocationId: attempt.invocationId, ...values })
    .onConflictDoUpdate({ target: [invocationReconciliations.tenantId, invocationReconciliations.invocationId], set: values })
    .returning();
  return row!;
}
