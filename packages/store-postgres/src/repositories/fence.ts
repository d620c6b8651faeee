import { FencingError, StoreError } from '@veetbot/domain';
import type { LeaseFence } from '@veetbot/ports';
import { eq } from 'drizzle-orm';
import type { Tx } from '../database';
import { runs } from '../schema';

/**
 * Fencing: the write proceeds only while the run's current fencing token is the caller's and
 * the lease is held. The run row is locked FOR SHARE until commit, so a new acquisition (an
 * UPDATE of that row) waits for this transaction: a write is either entirely before the
 * handover or refused.
 */
export async function assertFence(tx: Tx, fence: LeaseFence): Promise<void> {
  const [run] = await tx
    .select({ fencingToken: runs.fencingToken, leaseOwner: runs.leaseOwner })
    .from(runs)
    .where(eq(runs.id, fence.runId))
    .for('share');
  if (!run || run.leaseOwner === null || run.fencingToken !== fence.fencingToken) throw new FencingError(fence.runId);
}

export function notFound(what: string): StoreError {
  return new StoreError('store.not_found', `${what} does not exist for this tenant.`);
}
