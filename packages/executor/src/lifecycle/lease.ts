import type { LeaseFence, RunRow } from '@veetbot/ports';

/**
 * The one lease rule (docs/adr/0028). A lease is live while `now < lease_expires_at`; at the
 * instant it reaches `lease_expires_at` it has expired — the boundary belongs to expiry, as in
 * the store's SQL (`acquireLease` takes over and `findExpiredRunning` returns rows when
 * `lease_expires_at <= now`). A released lease (owner or expiry null) is not live.
 */
export function leaseIsLive(run: Pick<RunRow, 'leaseOwner' | 'leaseExpiresAt'>, now: Date): boolean {
  return run.leaseOwner !== null && run.leaseExpiresAt !== null && now.getTime() < run.leaseExpiresAt.getTime();
}

/**
 * § Deduplication, rules 3 and 4: this process (`owner`) holds the run's live lease under the
 * fence it works with. Anything else — another owner, a newer fencing token, an expired or
 * released lease — means a RUNNING row of the run may belong to someone else, so it is a
 * ConcurrencyConflict rather than ours to recover or settle.
 */
export function holdsLiveLease(run: RunRow | null, owner: string, fence: LeaseFence, now: Date): boolean {
  return run !== null && run.leaseOwner === owner && run.fencingToken === fence.fencingToken && leaseIsLive(run, now);
}
