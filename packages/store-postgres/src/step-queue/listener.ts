import pg from 'pg';
import type { NativeHandle } from '../database';
import { classifyDriverError } from '../classify-error';

export interface ListenerEvents {
  message(channel: string, payload: string): void;
  /** The listening connection was re-made: notifications sent meanwhile were missed. */
  reconnected(): void;
  /**
   * The listening connection was lost (PostgreSQL): until `reconnected`, notifications are not
   * heard. What trusts them must stop trusting (the api's key cache, docs/adr/0075).
   */
  lost?(): void;
  /** A listening connection failed; the listener keeps retrying (polling covers the gap). */
  error(error: unknown): void;
}

export interface Listener {
  close(): Promise<void>;
}

/**
 * Start listening on `channels` (fixed identifiers of ours, never input); resolves once LISTEN
 * is in effect. One listener per process carries every channel (the step queue's and the event
 * streams', docs/adr/0054).
 */
export function listen(
  native: NativeHandle,
  exclusive: <T>(fn: () => Promise<T>) => Promise<T>,
  channels: readonly string[],
  events: ListenerEvents,
  retryMs: number,
): Promise<Listener> {
  return native.driver === 'postgres'
    ? PostgresListener.start(native.pool, channels, events, retryMs)
    : listenPglite(native.client, exclusive, channels, events);
}

/**
 * PGlite's own LISTEN/NOTIFY: one process, one connection, and a NOTIFY committed on it reaches
 * every listener of that instance (the embedded api and worker share it). LISTEN is a statement
 * on the single connection, so it takes the adapter's mutex like any transaction.
 */
async function listenPglite(
  client: Extract<NativeHandle, { driver: 'pglite' }>['client'],
  exclusive: <T>(fn: () => Promise<T>) => Promise<T>,
  channels: readonly string[],
  events: ListenerEvents,
): Promise<Listener> {
  const unlisteners: (() => Promise<void>)[] = [];
  for (const channel of channels) {
    unlisteners.push(await exclusive(() => client.listen(channel, (payload) => events.message(channel, payload))));
  }
  return {
    async close() {
      for (const unlisten of unlisteners) {
        // A closed PGlite has nothing left to unlisten.
        if (!client.closed) await exclusive(() => unlisten()).catch(() => undefined);
      }
    },
  };
}

/**
 * A dedicated connection outside the pool (a LISTEN belongs to a session, and a pooled client
 * would carry it to its next user). When it drops, it is re-made every `retryMs` until closed;
 * `reconnected` then wakes every waiter, since notifications sent meanwhile were lost.
 */
class PostgresListener implements Listener {
  readonly #config: pg.ClientConfig;
  readonly #channels: readonly string[];
  readonly #events: ListenerEvents;
  readonly #retryMs: number;
  #client: pg.Client | null = null;
  #retry: ReturnType<typeof setTimeout> | null = null;
  #closed = false;

  private constructor(config: pg.ClientConfig, channels: readonly string[], events: ListenerEvents, retryMs: number) {
    this.#config = config;
    this.#channels = channels;
    this.#events = events;
    this.#retryMs = retryMs;
  }

  static async start(pool: pg.Pool, channels: readonly string[], events: ListenerEvents, retryMs: number): Promise<PostgresListener> {
    const { max: _max, idleTimeoutMillis: _idle, ...config } = pool.options as pg.PoolConfig;
    const listener = new PostgresListener(config, channels, events, retryMs);
    try {
      await listener.#connect();
    } catch (error) {
      throw classifyDriverError(error);
    }
    return listener;
  }

  async #connect(): Promise<void> {
    const client = new pg.Client(this.#config);
    client.on('notification', (message) => {
      if (this.#channels.includes(message.channel)) this.#events.message(message.channel, message.payload ?? '');
    });
    client.on('error', (error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client, null));
    try {
      await client.connect();
      await client.query(this.#channels.map((c) => `LISTEN ${c}`).join('; '));
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.#closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.#client = client;
  }

  #lost(client: pg.Client, error: unknown): void {
    if (this.#client !== client) return;
    this.#client = null;
    void client.end().catch(() => undefined);
    if (this.#closed) return;
    this.#events.lost?.();
    if (error !== null) this.#events.error(classifyDriverError(error));
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#retry !== null) return;
    this.#retry = setTimeout(() => {
      this.#retry = null;
      this.#connect().then(
        () => {
          if (!this.#closed) this.#events.reconnected();
        },
        (error: unknown) => {
          this.#events.error(classifyDriverError(error));
          this.#scheduleReconnect();
        },
      );
    }, this.#retryMs);
    // Reconnecting must never keep a process alive on its own.
    this.#retry.unref?.();
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#retry !== null) clearTimeout(this.#retry);
    this.#retry = null;
    const client = this.#client;
    this.#client = null;
    await client?.end().catch(() => undefined);
  }
}
