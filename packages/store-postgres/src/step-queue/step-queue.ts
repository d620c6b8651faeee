import { NO_TENANT_STEP_QUOTAS, type TenantStepQuotas } from '@veetbot/domain';
import type { ApiKeyChangeFeed, EventFeed, PendingStep, StepQueue } from '@veetbot/ports';
import { sql } from 'drizzle-orm';
import type { Database } from '../database';
import { claimPendingSteps } from './claim-pending';
import { and, eq, inArray } from 'drizzle-orm';
import { eventStreams } from '../schema';
import { API_KEYS_CHANNEL, ApiKeyChanges } from './api-key-changes';
import { EVENTS_CHANNEL, EventWakeUps } from './event-wakeups';
import { listen, type Listener } from './listener';
import { encodeStep, STEP_DONE_CHANNEL, STEPS_CHANNEL, WakeUps, type StepChannel } from './wake-ups';

export interface StepQueueOptions {
  /** How long to wait before re-making a lost LISTEN connection (PostgreSQL). Default 1 000 ms. */
  readonly reconnectMs?: number;
  /** A lost LISTEN connection (the queue keeps working by polling meanwhile). Default: ignored. */
  readonly onListenError?: (error: unknown) => void;
  /** The event streams' fallback check, while streams are open (docs/adr/0054). Default 5 000 ms. */
  readonly eventFallbackMs?: number;
  /** The operator's per-tenant concurrency quotas (docs/adr/0070): a tenant at its quota is not claimed. Default: none. */
  readonly quotas?: TenantStepQuotas;
}

/** The step queue on one database; `close()` stops listening (before `database.close()`). */
export interface DatabaseStepQueue extends StepQueue {
  /**
   * The event streams' wake-ups, on the same listening connection (docs/adr/0054): a committed
   * event append and a step's finish wake the streams of that tenant and run, in this process.
   */
  readonly events: EventFeed;
  /**
   * Changes to api_keys, on the same listening connection (docs/adr/0075): what lets an api
   * process cache keys and still refuse a revoked one within a second.
   */
  readonly apiKeyChanges: ApiKeyChangeFeed;
  close(): Promise<void>;
}

/**
 * ports.StepQueue on either driver (ARCHITECTURE.md "Processes": PostgreSQL is the only
 * coordinator). Resolves once LISTEN is in effect, so no notification sent after this
 * returns is missed while the connection stays up.
 */
export async function createStepQueue(database: Database, options: StepQueueOptions = {}): Promise<DatabaseStepQueue> {
  const wakeUps = new WakeUps();
  const events = new EventWakeUps({
    lastSequences: (tenantId, streamIds) => lastSequences(database, tenantId, streamIds),
    ...(options.eventFallbackMs === undefined ? {} : { fallbackMs: options.eventFallbackMs }),
  });
  // Not listening until LISTEN is in effect: no key is cached before (docs/adr/0075).
  const apiKeyChanges = new ApiKeyChanges(false);
  // One listening connection per process for the queue, the event streams (docs/adr/0054) and
  // the api key changes (docs/adr/0075).
  const listener = await listen(
    database.native,
    (fn) => database.exclusive(fn),
    [STEPS_CHANNEL, STEP_DONE_CHANNEL, EVENTS_CHANNEL, API_KEYS_CHANNEL],
    {
      message: (channel, payload) => {
        if (channel === API_KEYS_CHANNEL) {
          apiKeyChanges.deliver(payload);
          return;
        }
        if (channel === STEPS_CHANNEL || channel === STEP_DONE_CHANNEL) wakeUps.deliver(channel, payload);
        // A step's finish wakes its run's streams too: its events were written by the hot path,
        // which notifies nothing per event.
        if (channel === STEP_DONE_CHANNEL || channel === EVENTS_CHANNEL) events.deliver(channel, payload);
      },
      reconnected: () => {
        apiKeyChanges.setListening(true);
        wakeUps.wakeAll();
        events.wakeAll();
      },
      lost: () => apiKeyChanges.setListening(false),
      error: (error) => options.onListenError?.(error),
    },
    options.reconnectMs ?? 1000,
  );
  apiKeyChanges.setListening(true);
  return new PostgresStepQueue(database, wakeUps, events, apiKeyChanges, listener, options.quotas ?? NO_TENANT_STEP_QUOTAS);
}

class PostgresStepQueue implements DatabaseStepQueue {
  readonly #database: Database;
  readonly #wakeUps: WakeUps;
  readonly #listener: Listener;
  readonly events: EventWakeUps;
  readonly #apiKeyChanges: ApiKeyChanges;
  #closed = false;

  readonly #quotas: TenantStepQuotas;

  constructor(
    database: Database,
    wakeUps: WakeUps,
    events: EventWakeUps,
    apiKeyChanges: ApiKeyChanges,
    listener: Listener,
    quotas: TenantStepQuotas,
  ) {
    this.#quotas = quotas;
    this.#apiKeyChanges = apiKeyChanges;
    this.#database = database;
    this.#wakeUps = wakeUps;
    this.events = events;
    this.#listener = listener;
  }

  get apiKeyChanges(): ApiKeyChangeFeed {
    return this.#apiKeyChanges;
  }

  notify(step: PendingStep): Promise<void> {
    return this.#send(STEPS_CHANNEL, step);
  }

  notifyDone(step: PendingStep): Promise<void> {
    return this.#send(STEP_DONE_CHANNEL, step);
  }

  /**
   * pg_notify as one autocommitted statement (NOTIFY needs no table, and no tenant data crosses
   * it: the payload is the identity), delivered to every listener when it commits. One round
   * trip: the api sends one per submitted step and the worker one per finished step.
   */
  async #send(channel: StepChannel, step: PendingStep): Promise<void> {
    await this.#database.statement(sql`select pg_notify(${channel}, ${encodeStep(step)})`);
  }

  claimPending(limit: number, now: Date): Promise<PendingStep[]> {
    return claimPendingSteps(this.#database, limit, now, this.#quotas);
  }

  waitForWork(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return this.#wakeUps.waitForWork(timeoutMs, signal);
  }

  waitForStep(step: PendingStep, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return this.#wakeUps.waitForStep(step, timeoutMs, signal);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // Nothing is heard once closed: a cache over this feed stops serving.
    this.#apiKeyChanges.setListening(false);
    this.#wakeUps.close();
    this.events.close();
    await this.#listener.close();
  }
}

/** One tenant's stream counters (event_streams' primary key), for the event streams' fallback check. */
async function lastSequences(database: Database, tenantId: string, streamIds: readonly string[]): Promise<ReadonlyMap<string, number>> {
  const rows = await database.tenant(tenantId, (tx) =>
    tx
      .select({ streamId: eventStreams.streamId, lastSequence: eventStreams.lastSequence })
      .from(eventStreams)
      .where(and(eq(eventStreams.tenantId, tenantId), inArray(eventStreams.streamId, [...streamIds]))),
  );
  return new Map(rows.map((row) => [row.streamId, row.lastSequence]));
}
