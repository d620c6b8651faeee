import { InvalidTransitionError } from '@veetbot/domain';
import type { NewEvent, NewReview, ReviewRow, ReviewStore } from '@veetbot/ports';
import { eq } from 'drizzle-orm';
import type { Database } from '../database';
import { invocationReviews, toolInvocations } from '../schema';
import { appendEventsInTx } from './event-writer';
import { notFound } from './not-found';

/**
 * Resolutions of the UNCERTAIN review queue. The invocation row is locked and read, never
 * written: it stays UNCERTAIN (it recorded what the system knew); the resolution and its
 * events commit together.
 */
export class PostgresReviewStore implements ReviewStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  record(tenantId: string, review: NewReview, events: readonly NewEvent[]): Promise<ReviewRow> {
    return this.#db.tenant(tenantId, async (tx) => {
      // FOR SHARE: a concurrent resolution of the same row waits here, then meets the unique key.
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
        .returning();
      if (!created) throw new InvalidTransitionError('resolve a review', 'reviewed');
      await appendEventsInTx(tx, tenantId, events);
      return created;
    });
  }

  getByInvocation(tenantId: string, invocationId: string): Promise<ReviewRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx.select().from(invocationReviews).where(eq(invocationReviews.invocationId, invocationId));
      return row ?? null;
    });
  }
}
