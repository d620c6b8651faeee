import type { EventFeed, EventFeedSubscription } from '@veetbot/ports';
import { decodeStep, notificationRecord, STEP_DONE_CHANNEL } from './wake-ups';

/**
 * The channel a committed event append notifies (docs/adr/0054): its payload is the stream's
 * identity and its last sequence, never an event. The append's own transaction sends it
 * (repositories/event-writer.ts), so it is delivered exactly when the events become readable.
 * A step's events (the hot path) are not notified one by one: the step's finish already notifies
 * STEP_DONE_CHANNEL with the tenant and the run, and that wakes the run's streams.
 */
export const EVENTS_CHANNEL = 'veetbot_events';

/** `{tenant_id, run_id, sequence}`: run_id null for the tenant's run-less stream. */
export function encodeEventWake(tenantId: string, runId: string | null, sequence: number): string {
  return JSON.stringify({ tenant_id: tenantId, run_id: runId, sequence });
}

interface Wake {
  readonly tenantId: string;
  readonly runId: string | null;
  /** Null when the notification does not say (a step's finish): every stream of the run wakes. */
  readonly sequence: number | null;
}

function decodeEventWake(payload: string): Wake | null {
  const record = notificationRecord(payload);
  if (record === null) return null;
  const { tenant_id: tenantId, run_id: runId, sequence } = record;
  if (typeof tenantId !== 'string' || (runId !== null && typeof runId !== 'string')) return null;
  return { tenantId, runId, sequence: typeof sequence === 'number' && Number.isSafeInteger(sequence) ? sequence : null };
}

const streamKey = (tenantId: string, runId: string | null): string => `${tenantId}\0${runId ?? ''}`;

/**
 * The last sequence of some of one tenant's streams (stream id: the run id, '' for the run-less
 * stream); a stream with no event yet may be absent.
 */
export type LastSequences = (tenantId: string, streamIds: readonly string[]) => Promise<ReadonlyMap<string, number>>;

export interface EventWakeUpsOptions {
  /** Reads the counters for the fallback check; absent: no fallback check (notifications only). */
  readonly lastSequences?: LastSequences;
  /** How often the fallback check runs while streams are open. Default 5 000 ms. */
  readonly fallbackMs?: number;
}

/**
 * The event streams' side of the process's one listener: which streams are open, by tenant and
 * stream, and which to wake for a notification. Driver-independent (PGlite's own LISTEN in the
 * embedded process, a dedicated connection on PostgreSQL: step-queue/listener.ts).
 */
export class EventWakeUps implements EventFeed {
  readonly #streams = new Map<string, Set<Subscription>>();
  readonly #lastSequences: LastSequences | undefined;
  readonly #fallbackMs: number;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #closed = false;

  constructor(options: EventWakeUpsOptions = {}) {
    this.#lastSequences = options.lastSequences;
    this.#fallbackMs = options.fallbackMs ?? 5000;
  }

  /** A notification on EVENTS_CHANNEL or STEP_DONE_CHANNEL arrived (from any process). */
  deliver(channel: string, payload: string): void {
    let wake: Wake | null;
    if (channel === STEP_DONE_CHANNEL) {
      const step = decodeStep(payload);
      wake = step === null ? null : { tenantId: step.tenantId, runId: step.runId, sequence: null };
    } else {
      wake = decodeEventWake(payload);
    }
    if (wake === null) return;
    const subscriptions = this.#streams.get(streamKey(wake.tenantId, wake.runId));
    if (subscriptions === undefined) return;
    for (const subscription of subscriptions) subscription.wake(wake.sequence);
  }

  /** The listening connection was re-made: notifications may have been missed meanwhile. */
  wakeAll(): void {
    for (const subscriptions of this.#streams.values()) for (const subscription of subscriptions) subscription.wake(null);
  }

  subscribe(tenantId: string, runId: string | null): EventFeedSubscription {
    const key = streamKey(tenantId, runId);
    let subscriptions = this.#streams.get(key);
    if (subscriptions === undefined) {
      subscriptions = new Set();
      this.#streams.set(key, subscriptions);
    }
    const set = subscriptions;
    const subscription = new Subscription(tenantId, runId ?? '', () => {
      set.delete(subscription);
      if (set.size === 0 && this.#streams.get(key) === set) this.#streams.delete(key);
      if (this.#streams.size === 0 && this.#timer !== null) {
        clearTimeout(this.#timer);
        this.#timer = null;
      }
    });
    if (this.#closed) subscription.wake(null);
    else {
      set.add(subscription);
      this.#schedule();
    }
    return subscription;
  }

  /** The process is stopping: every wait returns. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.wakeAll();
  }

  /**
   * The fallback for a notification the database never delivered (docs/adr/0054): every
   * `fallbackMs` while streams are open, ONE read per tenant with open streams (the counters of
   * its open streams, event_streams' primary key), and only the streams behind their counter
   * wake. The cost is bounded by the tenants streaming, not by the streams.
   */
  #schedule(): void {
    if (this.#lastSequences === undefined || this.#timer !== null || this.#closed) return;
    const timer = setTimeout(() => void this.#check(timer), this.#fallbackMs);
    this.#timer = timer;
    // The fallback never keeps a process alive on its own.
    timer.unref?.();
  }

  async #check(timer: ReturnType<typeof setTimeout>): Promise<void> {
    const byTenant = new Map<string, Subscription[]>();
    for (const subscriptions of this.#streams.values()) {
      for (const subscription of subscriptions) {
        const list = byTenant.get(subscription.tenantId) ?? [];
        list.push(subscription);
        byTenant.set(subscription.tenantId, list);
      }
    }
    await Promise.all(
      [...byTenant].map(async ([tenantId, subscriptions]) => {
        try {
          const last = await this.#lastSequences!(tenantId, [...new Set(subscriptions.map((s) => s.streamId))]);
          for (const subscription of subscriptions) {
            const sequence = last.get(subscription.streamId);
            if (sequence !== undefined) subscription.wake(sequence);
          }
        } catch {
          // The database is unreachable: the streams' own reads will say so and end them.
        }
      }),
    );
    // Still this check's turn (no stop or restart meanwhile): the next one.
    if (this.#timer !== timer) return;
    this.#timer = null;
    if (this.#streams.size > 0) this.#schedule();
  }

  /** Streams subscribed now (tests; the api's cap counts its own). */
  get size(): number {
    let total = 0;
    for (const subscriptions of this.#streams.values()) total += subscriptions.size;
    return total;
  }
}

class Subscription implements EventFeedSubscription {
  readonly tenantId: string;
  /** event_streams.stream_id: the run id, or '' for the run-less stream. */
  readonly streamId: string;
  readonly #release: () => void;
  #seen = 0;
  /** A wake that came while nobody waited: the next wait returns at once. */
  #pending = false;
  #waiter: (() => void) | null = null;

  constructor(tenantId: string, streamId: string, release: () => void) {
    this.tenantId = tenantId;
    this.streamId = streamId;
    this.#release = release;
  }

  wake(sequence: number | null): void {
    if (sequence !== null && sequence <= this.#seen) return;
    if (this.#waiter !== null) this.#waiter();
    else this.#pending = true;
  }

  seen(sequence: number): void {
    if (sequence > this.#seen) this.#seen = sequence;
  }

  wait(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.#pending || signal?.aborted === true) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        if (this.#waiter === done) this.#waiter = null;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, timeoutMs));
      this.#waiter = done;
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  close(): void {
    this.#waiter?.();
    this.#release();
  }
}
