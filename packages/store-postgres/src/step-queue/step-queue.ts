import type { PendingStep, StepQueue } from '@veetbot/ports';
import { sql } from 'drizzle-orm';
import type { Database } from '../database';
import { claimPendingSteps } from './claim-pending';
import { listen, type Listener } from './listener';
import { encodeStep, STEP_DONE_CHANNEL, STEPS_CHANNEL, WakeUps, type StepChannel } from './wake-ups';

export interface StepQueueOptions {
  /** How long to wait before re-making a lost LISTEN connection (PostgreSQL). Default 1 000 ms. */
  readonly reconnectMs?: number;
  /** A lost LISTEN connection (the queue keeps working by polling meanwhile). Default: ignored. */
  readonly onListenError?: (error: unknown) => void;
}

/** The step queue on one database; `close()` stops listening (before `database.close()`). */
export interface DatabaseStepQueue extends StepQueue {
  close(): Promise<void>;
}

/**
 * ports.StepQueue on either driver (ARCHITECTURE.md "Processes": PostgreSQL is the only
 * coordinator). Resolves once LISTEN is in effect, so no notification sent after this
 * returns is missed while the connection stays up.
 */
export async function createStepQueue(database: Database, options: StepQueueOptions = {}): Promise<DatabaseStepQueue> {
  const wakeUps = new WakeUps();
  const listener = await listen(
    database.native,
    (fn) => database.exclusive(fn),
    {
      message: (channel, payload) => wakeUps.deliver(channel, payload),
      reconnected: () => wakeUps.wakeAll(),
      error: (error) => options.onListenError?.(error),
    },
    options.reconnectMs ?? 1000,
  );
  return new PostgresStepQueue(database, wakeUps, listener);
}

class PostgresStepQueue implements DatabaseStepQueue {
  readonly #database: Database;
  readonly #wakeUps: WakeUps;
  readonly #listener: Listener;
  #closed = false;

  constructor(database: Database, wakeUps: WakeUps, listener: Listener) {
    this.#database = database;
    this.#wakeUps = wakeUps;
    this.#listener = listener;
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
    return claimPendingSteps(this.#database, limit, now);
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
    this.#wakeUps.close();
    await this.#listener.close();
  }
}
