import { FencingError } from '@veetbot/domain';
import type { Clock, LeaseFence, RunRow, RunStore } from '@veetbot/ports';

/** Why a run's work was aborted: the signal's reason, for the tool's cancellation token. */
export class RunAborted extends Error {
  readonly why: 'cancelled' | 'lease_lost' | 'run_ended';
  constructor(why: 'cancelled' | 'lease_lost' | 'run_ended') {
    super(`Run work aborted: ${why}`);
    this.why = why;
  }
}

/**
 * The runs this process is working on right now. The store lets an owner re-acquire its own
 * lease (and bumps the fencing token when it does), so two tasks of one process on one run
 * would fence each other out; this map refuses the second before it reaches the store.
 */
export class ActiveRuns {
  readonly #runs = new Map<string, AbortController>();

  static key(tenantId: string, runId: string): string {
    return `${tenantId}\0${runId}`;
  }

  enter(tenantId: string, runId: string): AbortController | null {
    const key = ActiveRuns.key(tenantId, runId);
    if (this.#runs.has(key)) return null;
    const controller = new AbortController();
    this.#runs.set(key, controller);
    return controller;
  }

  leave(tenantId: string, runId: string, controller: AbortController): void {
    const key = ActiveRuns.key(tenantId, runId);
    if (this.#runs.get(key) === controller) this.#runs.delete(key);
  }

  has(tenantId: string, runId: string): boolean {
    return this.#runs.has(ActiveRuns.key(tenantId, runId));
  }

  abort(tenantId: string, runId: string, reason: RunAborted): void {
    this.#runs.get(ActiveRuns.key(tenantId, runId))?.abort(reason);
  }
}

export interface HeldRun {
  readonly fence: LeaseFence;
  /** The run as the lease acquisition left it (status read under the run's row lock). */
  readonly run: RunRow;
  /** Aborted when the run is cancelled, ends, or the lease is lost: in-flight tools stop. */
  readonly signal: AbortSignal;
}

export interface LeaseContext {
  readonly runs: RunStore;
  readonly clock: Clock;
  readonly owner: string;
  readonly ttlMs: number;
  readonly active: ActiveRuns;
}

/**
 * Run `work` while holding the run's lease: acquired first (null when another worker — or
 * another task of this process — holds it live), renewed every third of its TTL so a long
 * batch keeps it, and released at the end whatever happened. A renewal refused with
 * FencingError means another worker took the run: the signal aborts so in-flight tools stop,
 * and the stale writes that follow are refused by the store.
 */
export async function withRunLease<T>(
  ctx: LeaseContext,
  tenantId: string,
  runId: string,
  work: (held: HeldRun) => Promise<T>,
): Promise<{ readonly held: true; readonly value: T } | { readonly held: false }> {
  const out = await withAcquiredLease(
    ctx,
    tenantId,
    runId,
    async () => {
      const acquired = await ctx.runs.acquireLease(tenantId, runId, ctx.owner, ctx.ttlMs, ctx.clock.now());
      return acquired === null ? { refused: null } : { acquired };
    },
    work,
  );
  return out.held ? out : { held: false };
}

/** What an acquisition took: the lease's fencing token and the run as it left it, with anything read alongside. */
export interface LeaseAcquisition {
  readonly fencingToken: number;
  readonly run: RunRow;
}

/** A held lease as `withAcquiredLease` gives it to its work, which may release it itself. */
export interface OwnedRun extends HeldRun {
  /** The work released the lease with its own last write (docs/adr/0049): nothing to release after it. */
  released(): void;
}

/**
 * `withRunLease` for an acquisition that reads and writes more in the same statement (a step's
 * opening, docs/adr/0049): `acquire` takes the lease and answers what it read, or refuses with a
 * reason (`R`) and writes nothing. The lease is renewed while `work` runs and released after it
 * unless `work` released it with its own last write.
 */
export async function withAcquiredLease<A extends LeaseAcquisition, R, T>(
  ctx: LeaseContext,
  tenantId: string,
  runId: string,
  acquire: () => Promise<{ readonly acquired: A } | { readonly refused: R }>,
  work: (held: OwnedRun, acquired: A) => Promise<T>,
): Promise<{ readonly held: true; readonly value: T } | { readonly held: false; readonly refused: R | null }> {
  const controller = ctx.active.enter(tenantId, runId);
  if (controller === null) return { held: false, refused: null };
  try {
    const taken = await acquire();
    if (!('acquired' in taken)) return { held: false, refused: taken.refused };
    const acquired = taken.acquired;
    const fence: LeaseFence = { runId, fencingToken: acquired.fencingToken };
    const renewal = startRenewal(ctx, tenantId, fence, controller);
    let released = false;
    try {
      const held: OwnedRun = {
        fence,
        run: acquired.run,
        signal: controller.signal,
        released: () => {
          released = true;
          renewal.stop();
        },
      };
      return { held: true, value: await work(held, acquired) };
    } finally {
      renewal.stop();
      // Best effort: a lease that is not released simply expires.
      if (!released) await ctx.runs.releaseLease(tenantId, fence).catch(() => false);
    }
  } finally {
    ctx.active.leave(tenantId, runId, controller);
  }
}

function startRenewal(ctx: LeaseContext, tenantId: string, fence: LeaseFence, controller: AbortController): { stop(): void } {
  let renewing = false;
  const timer = setInterval(
    () => {
      if (renewing || controller.signal.aborted) return;
      renewing = true;
      void renew(ctx, tenantId, fence, controller).finally(() => {
        renewing = false;
      });
    },
    Math.max(1, Math.floor(ctx.ttlMs / 3)),
  );
  // A renewal timer must never keep a process alive on its own.
  (timer as { unref?: () => void }).unref?.();
  return { stop: () => clearInterval(timer) };
}

async function renew(ctx: LeaseContext, tenantId: string, fence: LeaseFence, controller: AbortController): Promise<void> {
  try {
    await ctx.runs.renewLease(tenantId, fence, ctx.ttlMs, ctx.clock.now());
  } catch (error) {
    if (FencingError.isInstance(error)) controller.abort(new RunAborted('lease_lost'));
    // Any other failure (the database briefly unreachable): try again at the next tick; the
    // lease is a third of its TTL from expiring.
    return;
  }
  // A cancel issued by another process reaches this one here, at most a third of a TTL late.
  const run = await ctx.runs.get(tenantId, fence.runId).catch(() => null);
  if (run !== null && run.status !== 'running' && run.status !== 'waiting_for_user') {
    controller.abort(new RunAborted(run.status === 'cancelled' ? 'cancelled' : 'run_ended'));
  }
}
