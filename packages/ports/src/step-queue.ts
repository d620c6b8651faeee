/*
 * The seam between the api and the worker (ARCHITECTURE.md "A call's path", 1–2 and 4): the
 * api stores a step's batch as a `pending` steps row and wakes a worker; a worker claims it,
 * runs it under the run's lease, and wakes whoever waits for the outcome. PostgreSQL is the
 * only coordinator ("Processes"): claims use FOR UPDATE SKIP LOCKED, wake-ups LISTEN/NOTIFY,
 * with polling as the fallback when a notification is lost.
 */

/** A step's identity, and all a wake-up carries: never the batch, never arguments. */
export interface PendingStep {
  readonly tenantId: string;
  readonly runId: string;
  readonly stepNumber: number;
}

export interface StepQueue {
  /**
   * Wake a worker for a stored step (a resubmitted one, an approved call's: a step the steps
   * route inserts is announced by its own commit, StepSubmissionStore.submit). NOTIFY on PostgreSQL,
   * reaching every listening process; an in-process signal on PGlite (one process). Losing a
   * notification only costs latency: workers also poll.
   */
  notify(step: PendingStep): Promise<void>;
  /**
   * The worker, after a step's submission returned (completed, or left running with approvals
   * pending, or refused): wake whoever waits in `waitForStep`, in any process.
   */
  notifyDone(step: PendingStep): Promise<void>;
  /**
   * Worker: up to `limit` steps to run, oldest first, across tenants: pending steps of running
   * runs whose lease is free or expired at `now`, and running steps whose worker died mid-batch
   * (the run's lease expired without being released; a worker that finishes or suspends
   * releases it). Resubmitting such a step runs the calls that never started; the ones that
   * did dedup to their rows. Claimed with FOR UPDATE SKIP LOCKED (the maintenance
   * role: identity columns only), so claims made at the same moment are disjoint. Claiming does
   * not change the row; the runtime's run lease is the real claim, and a step claimed twice
   * dedups to its recorded outcomes.
   */
  claimPending(limit: number, now: Date): Promise<PendingStep[]>;
  /**
   * Resolves when a `notify` arrives or after `timeoutMs` (the polling fallback), whichever is
   * first; at once when `signal` is (or becomes) aborted. A notification that arrived since
   * the previous `waitForWork` returned resolves the next call at once, so a wake-up landing
   * while the caller was claiming is never lost.
   */
  waitForWork(timeoutMs: number, signal?: AbortSignal): Promise<void>;
  /**
   * The api's bounded wait: resolves when `notifyDone` for this step arrives or `timeoutMs`
   * passes (or `signal` aborts). It listens from the moment it is called, so call it BEFORE
   * re-reading the step's status: `const done = queue.waitForStep(s, ms); if (!finished(await
   * read())) await done;`. It resolves either way: the caller re-reads the row to learn which.
   */
  waitForStep(step: PendingStep, timeoutMs: number, signal?: AbortSignal): Promise<void>;
}
