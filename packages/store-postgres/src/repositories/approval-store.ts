import { InvalidTransitionError } from '@veetbot/domain';
import type { ApprovalDecision, ApprovalRow, ApprovalStore, NewEvent } from '@veetbot/ports';
import { and, asc, eq } from 'drizzle-orm';
import type { Database } from '../database';
import { approvals } from '../schema';
import { appendEventsInTx } from './event-writer';
import { notFound } from './not-found';

export class PostgresApprovalStore implements ApprovalStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  get(tenantId: string, approvalId: string): Promise<ApprovalRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx.select().from(approvals).where(eq(approvals.id, approvalId));
      return row ?? null;
    });
  }

  getByInvocation(tenantId: string, invocationId: string): Promise<ApprovalRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx.select().from(approvals).where(eq(approvals.invocationId, invocationId));
      return row ?? null;
    });
  }

  listPending(tenantId: string, limit: number): Promise<ApprovalRow[]> {
    return this.#db.tenant(tenantId, (tx) =>
      tx.select().from(approvals).where(eq(approvals.status, 'pending')).orderBy(asc(approvals.requestedAt)).limit(limit),
    );
  }

  decide(tenantId: string, approvalId: string, decision: ApprovalDecision, events: readonly NewEvent[]): Promise<ApprovalRow> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [decided] = await tx
        .update(approvals)
        .set({ status: decision.decision, decidedBy: decision.decidedBy, decidedAt: decision.decidedAt })
        .where(and(eq(approvals.id, approvalId), eq(approvals.status, 'pending')))
        .returning();
      if (!decided) {
        const [existing] = await tx.select({ status: approvals.status }).from(approvals).where(eq(approvals.id, approvalId));
        if (!existing) throw notFound('The approval');
        throw new InvalidTransitionError('decide', existing.status);
      }
      await appendEventsInTx(tx, tenantId, events);
      return decided;
    });
  }
}
