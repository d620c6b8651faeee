import { ConfigurationError } from '@veetbot/domain';
import type { Clock, PendingStep, StepQueue } from '@veetbot/ports';
import type { Runtime } from './runtime';
import { RuntimeError } from './runtime-errors';
import type { StoredTraceContext } from './step-trace';
import type { StepOutcome } from './step-submission';
import type { SweepReport } from './sweep';

export interface WorkerLoopSettings {
  /** Steps this process runs at once (each under its own run's lease). */
  concurrency: number;
  /** The polling fallback: the longest wait for work when no notification arrives. */
  pollIntervalMs: number;
  /** How often the recovery sweep runs (first at start). */
  sweepIntervalMs: number;
  /** The longest a step that failed or was busy is left before this process tries it again. */
  maximumRetryDelayMs: number;
}

export const DEFAULT_WORKER_LOOP_SETTINGS: Readonly<WorkerLoopSettings> = Object.freeze({
  concurrency: 4,
  pollIntervalMs: 1000,
  sweepIntervalMs: 5000,
  maximumRetryDelayMs: 60_000,
});

/**
 * What the loop did, for the composition root's log and for tests. Nothing here stops the
 * loop: a store outage, an unreadable batch or a failed sweep is reported and retried.
 */
export type WorkerLoopEvent =
  /** submitStep returned: every call concluded, or some wait for an approval. */
  | {
      readonly kind: 'step_ran';
      readonly step: PendingStep;
      readonly outcome: StepOutcome;
      readonly traceContext: StoredTraceContext | null;
    }
  /** Another worker (or task) held the run's lease: left for later. */
  | { readonly kind: 'step_busy'; readonly step: PendingStep }
  /** The tenant runs as many steps as its quota allows (docs/adr/0070): left pending, claimed again once it drops below. */
  | { readonly kind: 'step_over_quota'; readonly step: PendingStep }
  /** The runtime refused the step (run not active, session closed, ...): the api's waiter is woken to read why. */
  | { readonly kind: 'step_refused'; readonly step: PendingStep; readonly error: RuntimeError }
  /** The stored batch does not parse: a defect in whoever wrote it; retried only after the longest delay. */
  | { readonly kind: 'step_unreadable'; readonly step: PendingStep; readonly error: unknown }
  /** An infrastructure failure (the store, a lost lease): the step stays open and is retried. */
  | { readonly kind: 'step_failed'; readonly step: PendingStep; readonly error: unknown }
  | { readonly kind: 'notify_failed'; readonly step: PendingStep; readonly error: unknown }
  | { readonly kind: 'claim_failed'; readonly error: unknown }
  | { readonly kind: 'sweep_ran'; readonly report: SweepReport }
  | { readonly kind: 'sweep_failed'; readonly error: unknown };

export interface WorkerLoopDeps {
  /** The process's one Runtime (its lease owner is this worker). */
  readonly runtime: Pick<Runtime, 'submitQueuedStep' | 'sweep'>;
  readonly queue: StepQueue;
  /** The runtime's clock: claims compare lease expiry with the same time the leases were set by. */
  readonly clock: Clock;
  readonly settings?: Partial<WorkerLoopSettings>;
  readonly onEvent?: (event: WorkerLoopEvent) => void;
  /**
   * The queue's claim leaves out steps of tenants at their quota (docs/adr/0070): a batch's end
   * may make one claimable with no notification sent, so claim again at every batch's end.
   * Default false: a batch's end claims only when the last claim left work behind (docs/adr/0076).
   */
  readonly claimAfterEveryBatch?: boolean;
}

export interface WorkerStopReport {
  /** Every in-flight batch (and a running sweep) finished within drainMs. */
  readonly drained: boolean;
  /** Batches still running when drainMs ran out: their leases expire and the sweep recovers them. */
  readonly abandoned: number;
}

const pendingStepKey = (s: PendingStep): string => `${s.tenantId}\0${s.runId}\0${s.stepNumber}`;
const runKeyOf = (s: PendingStep): string => `${s.tenantId}\0${s.runId}`;

/**
 * The worker (ARCHITECTURE.md "A call's path", 2 and 5): claims steps the api stored, runs each
 * through `runtime.submitStep` under its run's lease, wakes the api's waiter when it is done,
 * and runs the recovery sweep on an interval. Wake-ups come from the queue (LISTEN/NOTIFY);
 * the poll interval is the fallback. At most one step per run at a time in this process
 * (a second would be refused by the lease anyway), at most `concurrency` in all.
 */
export class WorkerLoop {
  readonly #deps: WorkerLoopDeps;
  readonly #settings: Readonly<WorkerLoopSettings>;
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #runsInFlight = new Set<string>();
  /** Steps left for later in this process: when to try again, and how often they failed. Pacing, not a fact: real time. */
  readonly #deferred = new Map<string, { readonly until: number; readonly failures: number }>();
  readonly #stopping = new AbortController();
  #wake = new AbortController();
  /** The claim statement is running. */
  #claiming = false;
  /** The last claim left work it could not start (no slot, its run busy here, a full page). */
  #leftBehind = false;
  #state: 'idle' | 'running' | 'stopped' = 'idle';
  #loops: Promise<unknown> = Promise.resolve();
  #stop: Promise<WorkerStopReport> | null = null;

  constructor(deps: WorkerLoopDeps) {
    this.#deps = deps;
    this.#settings = resolveWorkerLoopSettings(deps.settings);
  }

  get settings(): Readonly<WorkerLoopSettings> {
    return this.#settings;
  }

  /** Batches running right now. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  start(): void {
    if (this.#state !== 'idle') throw new Error(`The worker loop was already ${this.#state === 'running' ? 'started' : 'stopped'}.`);
    this.#state = 'running';
    this.#loops = Promise.all([this.#claimLoop(), this.#sweepLoop()]);
  }

  /**
   * Stop claiming, wait up to `drainMs` for the batches in flight (each releases its run's
   * lease as it ends) and a sweep in progress. Idempotent: later calls return the first
   * call's report.
   */
  stop(options: { drainMs?: number } = {}): Promise<WorkerStopReport> {
    this.#stop ??= this.#drain(options.drainMs ?? 20_000);
    return this.#stop;
  }

  async #drain(drainMs: number): Promise<WorkerStopReport> {
    const wasRunning = this.#state === 'running';
    this.#state = 'stopped';
    this.#stopping.abort();
    this.#wake.abort();
    if (!wasRunning) return { drained: true, abandoned: 0 };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const everything = Promise.all([this.#loops, ...this.#inFlight.values()]).then(() => true);
    const drained = await Promise.race([everything, new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), drainMs)))]);
    clearTimeout(timer);
    return { drained, abandoned: drained ? 0 : this.#inFlight.size };
  }

  async #claimLoop(): Promise<void> {
    const { queue, clock } = this.#deps;
    const { concurrency, pollIntervalMs } = this.#settings;
    while (!this.#stopping.signal.aborted) {
      // A fresh wake signal per round, made BEFORE claiming: a batch that ends while the claim
      // runs aborts it, and the wait below returns at once.
      this.#wake = new AbortController();
      let started = 0;
      // The claim returned as many steps as it was asked for: there may be more.
      let fullPage = false;
      // Work was left behind for want of a slot or because its run's step runs here: a batch's
      // end must claim again. Otherwise only a notification (or the poll) brings new work, and a
      // batch's end claims nothing (docs/adr/0076: no claim that cannot find anything).
      let leftBehind = false;
      const capacity = concurrency - this.#inFlight.size;
      if (capacity > 0) {
        let claimed: PendingStep[] = [];
        // Claimed steps this process must pass over (deferred, or their run busy here) would
        // otherwise crowd out the rest.
        const limit = Math.min(capacity + this.#liveDeferrals() + this.#runsInFlight.size, capacity + 100);
        this.#claiming = true;
        try {
          claimed = await queue.claimPending(limit, clock.now());
        } catch (error) {
          this.#emit({ kind: 'claim_failed', error });
        } finally {
          this.#claiming = false;
        }
        fullPage = claimed.length >= limit;
        for (const step of claimed) {
          if (this.#stopping.signal.aborted) break;
          if (this.#inFlight.size >= concurrency) {
            leftBehind = true;
            break;
          }
          if (this.#runsInFlight.has(runKeyOf(step))) {
            leftBehind = true;
            continue;
          }
          // A deferred step's time comes with the poll (its delay is at least the interval).
          if (this.#isDeferred(step)) continue;
          this.#launch(step);
          started += 1;
        }
      } else {
        leftBehind = true;
      }
      this.#leftBehind = leftBehind || fullPage;
      if (this.#stopping.signal.aborted) break;
      // A full page was started and there is room: look for more at once. Otherwise wait for a
      // notification, a batch to end (when work was left behind), or the poll interval.
      if (started > 0 && fullPage && this.#inFlight.size < concurrency) continue;
      await queue.waitForWork(pollIntervalMs, this.#wake.signal);
    }
  }

  async #sweepLoop(): Promise<void> {
    while (!this.#stopping.signal.aborted) {
      try {
        this.#emit({ kind: 'sweep_ran', report: await this.#deps.runtime.sweep() });
      } catch (error) {
        this.#emit({ kind: 'sweep_failed', error });
      }
      await sleep(this.#settings.sweepIntervalMs, this.#stopping.signal);
    }
  }

  #launch(step: PendingStep): void {
    const key = pendingStepKey(step);
    const runKey = runKeyOf(step);
    this.#runsInFlight.add(runKey);
    const task = this.#run(step).finally(() => {
      this.#inFlight.delete(key);
      this.#runsInFlight.delete(runKey);
      // A slot is free, and the run's next step may now go: claim again when the last claim
      // left work behind or is still running (its answer may hold this run's next step), or
      // when quotas hold steps back.
      if (this.#leftBehind || this.#claiming || this.#deps.claimAfterEveryBatch === true) this.#wake.abort();
    });
    this.#inFlight.set(key, task);
  }

  /** One claimed step, start to end; never throws. */
  async #run(step: PendingStep): Promise<void> {
    try {
      // Opened by its identity: the opening reads the stored step with its run and session
      // (docs/adr/0049), and its finish tells the api's wait in its own commit.
      const result = await this.#deps.runtime.submitQueuedStep(step, { notifyDone: true });
      switch (result.kind) {
        case 'completed':
          // Completed since the claim (another worker got there first): nothing to do.
          return;
        case 'unreadable':
          this.#defer(step, this.#settings.maximumRetryDelayMs);
          this.#emit({ kind: 'step_unreadable', step, error: result.error });
          return;
        case 'ran':
          this.#deferred.delete(pendingStepKey(step));
          this.#emit({ kind: 'step_ran', step, outcome: result.outcome, traceContext: result.traceContext });
          return;
      }
    } catch (error) {
      if (RuntimeError.isInstance(error) && error.code === 'runtime.tenant_over_quota') {
        // Not deferred: the claim leaves the tenant out until one of its steps ends, so the
        // step comes back exactly when there is room (docs/adr/0070). Its waiter keeps waiting.
        this.#emit({ kind: 'step_over_quota', step });
        return;
      }
      this.#defer(step);
      if (RuntimeError.isInstance(error) && error.code === 'runtime.run_busy') {
        this.#emit({ kind: 'step_busy', step });
        return;
      }
      if (!RuntimeError.isInstance(error)) {
        this.#emit({ kind: 'step_failed', step, error });
        return;
      }
      this.#emit({ kind: 'step_refused', step, error });
    }
    // A refused step never reached its finish: the api's bounded wait re-reads the step (or the
    // run) when woken.
    try {
      await this.#deps.queue.notifyDone(step);
    } catch (error) {
      this.#emit({ kind: 'notify_failed', step, error });
    }
  }

  /** Leave a step for later: the poll interval, doubling with each failure up to the maximum. */
  #defer(step: PendingStep, atLeastMs = 0): void {
    const key = pendingStepKey(step);
    const failures = (this.#deferred.get(key)?.failures ?? 0) + 1;
    const { pollIntervalMs, maximumRetryDelayMs } = this.#settings;
    const delay = Math.max(atLeastMs, Math.min(maximumRetryDelayMs, pollIntervalMs * 2 ** Math.min(failures - 1, 30)));
    this.#deferred.set(key, { until: performance.now() + delay, failures });
  }

  /**
   * Deferrals still in force: the steps a claim must make room for. A step found busy is
   * deferred here and then finished by the worker that had it, so its entry would otherwise
   * stay forever — growing every claim (the limit above) with each collision between workers
   * (docs/adr/0070). An entry long past its time (longer than the longest delay) is dropped:
   * a step that fails again starts its backoff afresh.
   */
  #liveDeferrals(): number {
    const now = performance.now();
    let live = 0;
    for (const [key, deferred] of this.#deferred) {
      if (deferred.until > now) live += 1;
      else if (now - deferred.until > this.#settings.maximumRetryDelayMs) this.#deferred.delete(key);
    }
    return live;
  }

  #isDeferred(step: PendingStep): boolean {
    const deferred = this.#deferred.get(pendingStepKey(step));
    return deferred !== undefined && deferred.until > performance.now();
  }

  #emit(event: WorkerLoopEvent): void {
    try {
      this.#deps.onEvent?.(event);
    } catch {
      // An observer's failure is not the worker's.
    }
  }
}

/** Defaults filled in and every value checked: a bad setting is a startup error, never a clamp. */
export function resolveWorkerLoopSettings(partial: Partial<WorkerLoopSettings> = {}): Readonly<WorkerLoopSettings> {
  const given = Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined)) as Partial<WorkerLoopSettings>;
  const settings: WorkerLoopSettings = { ...DEFAULT_WORKER_LOOP_SETTINGS, ...given };
  for (const name of Object.keys(DEFAULT_WORKER_LOOP_SETTINGS) as (keyof WorkerLoopSettings)[]) {
    const value = settings[name];
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new ConfigurationError('config.worker_settings_invalid', `Worker setting ${name} must be a positive integer.`);
    }
  }
  return Object.freeze(settings);
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
