import type { PendingStep } from '@veetbot/ports';
import { and, asc, eq, isNotNull, isNull, lte, or } from 'drizzle-orm';
import type { Database } from '../database';
import { runs, steps } from '../schema';

/**
 * The step queue's claim (ports/step-queue.ts): pending steps of running runs whose lease is
 * free or expired, and running steps whose worker died (below), oldest first, across tenants. It runs as veetbot_maintenance (identity
 * columns only, like the recovery sweep; migrations/0003) and locks what it returns with
 * FOR UPDATE OF steps SKIP LOCKED, so claims made at the same moment never overlap. The lock
 * ends with this short transaction: the runtime's run lease is what makes a step one worker's.
 */
export async function claimPendingSteps(database: Database, limit: number, now: Date): Promise<PendingStep[]> {
  if (!Number.isSafeInteger(limit) || limit < 1) return [];
  const rows = await database.transaction({ role: 'maintenance' }, (tx) =>
    tx
      .select({ tenantId: steps.tenantId, runId: steps.runId, stepNumber: steps.stepNumber })
      .from(steps)
      .innerJoin(runs, and(eq(runs.id, steps.runId), eq(runs.tenantId, steps.tenantId)))
      .where(
        and(
          eq(runs.status, 'running'),
          or(
            and(eq(steps.status, 'pending'), or(isNull(runs.leaseOwner), isNull(runs.leaseExpiresAt), lte(runs.leaseExpiresAt, now))),
            // A worker that finishes (or suspends) releases the lease, clearing its owner; one
            // that died mid-batch leaves it set until it expires. Its step's calls that never
            // started would otherwise never run: resubmitting the step runs them, and every call
            // that did start dedups to its row (and its recovery, the sweep's table).
            and(eq(steps.status, 'running'), isNotNull(runs.leaseOwner), lte(runs.leaseExpiresAt, now)),
          ),
        ),
      )
      .orderBy(asc(steps.createdAt), asc(steps.id))
      .limit(limit)
      .for('update', { of: steps, skipLocked: true }),
  );
  return rows.map((r) => ({ tenantId: r.tenantId, runId: r.runId, stepNumber: r.stepNumber }));
}
