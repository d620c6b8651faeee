import type { PendingStep } from '@veetbot/ports';

/** The two channels (LISTEN/NOTIFY on PostgreSQL, PGlite's own on the embedded driver). */
export const STEPS_CHANNEL = 'veetbot_steps';
export const STEP_DONE_CHANNEL = 'veetbot_step_done';
export type StepChannel = typeof STEPS_CHANNEL | typeof STEP_DONE_CHANNEL;

/** The payload is the step's identity and nothing else: never the batch, never arguments. */
export function encodeStep(step: PendingStep): string {
  return JSON.stringify({ tenant_id: step.tenantId, run_id: step.runId, step_number: step.stepNumber });
}

/** Null for anything that is not exactly an identity (a stray NOTIFY on our channel). */
export function decodeStep(payload: string): PendingStep | null {
  const record = notificationRecord(payload);
  if (record === null) return null;
  const { tenant_id: tenantId, run_id: runId, step_number: stepNumber } = record;
  if (typeof tenantId !== 'string' || typeof runId !== 'string' || typeof stepNumber !== 'number' || !Number.isSafeInteger(stepNumber))
    return null;
  return { tenantId, runId, stepNumber };
}

const pendingStepKey = (step: PendingStep): string => `${step.tenantId}\0${step.runId}\0${step.stepNumber}`;

/**
 * The waiting side of the queue, driver-independent: who waits for work, who waits for which
 * step, and the one remembered wake-up that makes a notification landing between two waits
 * count.
 */
export class WakeUps {
  readonly #work = new Set<() => void>();
  readonly #steps = new Map<string, Set<() => void>>();
  #missedWork = false;

  /** A notification on `channel` arrived (from this process or another). */
  deliver(channel: StepChannel, payload: string): void {
    if (channel === STEPS_CHANNEL) {
      this.wakeWork();
      return;
    }
    const step = decodeStep(payload);
    if (step === null) return;
    const waiters = this.#steps.get(pendingStepKey(step));
    if (waiters === undefined) return;
    for (const resolve of [...waiters]) resolve();
  }

  wakeWork(): void {
    if (this.#work.size === 0) {
      this.#missedWork = true;
      return;
    }
    for (const resolve of [...this.#work]) resolve();
  }

  /**
   * Everything waiting resolves now: after the listening connection was lost and re-made, a
   * notification may have been missed, and every waiter re-reads what it waits for.
   */
  wakeAll(): void {
    this.wakeWork();
    for (const waiters of [...this.#steps.values()]) for (const resolve of [...waiters]) resolve();
  }

  waitForWork(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.#missedWork) {
      this.#missedWork = false;
      return Promise.resolve();
    }
    return waitOn(this.#work, timeoutMs, signal);
  }

  waitForStep(step: PendingStep, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const key = pendingStepKey(step);
    let waiters = this.#steps.get(key);
    if (waiters === undefined) {
      waiters = new Set();
      this.#steps.set(key, waiters);
    }
    const set = waiters;
    return waitOn(set, timeoutMs, signal).finally(() => {
      if (set.size === 0 && this.#steps.get(key) === set) this.#steps.delete(key);
    });
  }

  /** Wake every waiter (the queue is closing). */
  close(): void {
    this.wakeAll();
    this.#missedWork = false;
  }
}

/** Registers synchronously (before the returned promise is awaited), so nothing is missed. */
function waitOn(waiters: Set<() => void>, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      waiters.delete(done);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, timeoutMs));
    waiters.add(done);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** A notification's payload as a JSON object, or null for anything else (a stray NOTIFY). */
export function notificationRecord(payload: string): Record<string, unknown> | null {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return null;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}
