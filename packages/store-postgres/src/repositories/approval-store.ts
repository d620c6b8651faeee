import { ApprovalBindingError, InvalidTransitionError } from '@veetbot/domain';
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
        // docs/adr/0047: compare-and-set on what the decider saw, in the same statement, so a
        // re-ask under a new policy version between their read and this write cannot be decided.
        .where(
          and(
            eq(approvals.id, approvalId),
            eq(approvals.status, 'pending'),
            ...(decision.expected === undefined
              ? []
              : [
                  eq(approvals.argumentsHash, decision.expected.argumentsHash),
                  eq(approvals.policyVersion, decision.expected.policyVersion),
                ]),
          ),
        )
        .returning();
      if (!decided) {
        const [existing] = await tx
          .select({ status: approvals.status, argumentsHash: approvals.argumentsHash, policyVersion: approvals.policyVersion })
          .from(approvals)
          .where(eq(approvals.id, approvalId));
        if (!existing) throw notFound('The approval');
        if (existing.status !== 'pending') throw new InvalidTransitionError('decide', existing.status);
        throw new ApprovalBindingError(existing.argumentsHash !== decision.expected?.argumentsHash ? 'arguments_hash' : 'policy_version');
      }
      await appendEventsInTx(tx, tenantId, events);
      return decided;
    });
  }
}
