import type { PGlite } from '@electric-sql/pglite';
import { ConfigurationError } from '@veetbot/domain';
import { type SQL, sql } from 'drizzle-orm';
import { drizzle as drizzleNodePostgres } from 'drizzle-orm/node-postgres';
import type { PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import pg from 'pg';
import { classifyDriverError } from './classify-error';
import { Mutex } from './mutex';
import { APP_ROLE, MAINTENANCE_ROLE, TENANT_SETTING } from './roles';

type NoSchema = Record<string, never>;
/** A drizzle transaction on either driver. */
export type Tx = PgTransaction<PgQueryResultHKT, NoSchema, ExtractTablesWithRelations<NoSchema>>;

/**
 * Who a transaction runs as.
 * - `tenant`: veetbot_app with veetbot.tenant_id set: row-level security for that tenant.
 *   `tenantId: null` sets no tenant at all (reads nothing; used to prove exactly that).
 * - `maintenance`: veetbot_maintenance: read-only, across tenants, identity columns only.
 * - `owner`: the connecting role itself (migrations, creating tenants). Never for tenant data.
 */
export type TransactionScope =
  | {
      readonly role: 'tenant';
      readonly tenantId: string | null;
      /**
       * docs/adr/0043: the commit is not waited for on disk (`synchronous_commit = off` for this
       * transaction only); the next flushed commit, or the WAL writer, makes it durable. Only for
       * writes whose loss in a server crash is harmless (the step's own bookkeeping).
       */
      readonly deferFlush?: boolean;
    }
  | { readonly role: 'maintenance' }
  | { readonly role: 'owner' };

export interface OpenDatabaseOptions {
  /** A postgres:// URL (DATABASE_URL): node-postgres with a pool. */
  readonly url?: string | undefined;
  /** Without a url: PGlite in this folder (the embedded default); `memory://` for tests. */
  readonly dataDir?: string | undefined;
  /** node-postgres pool size. Default 10. */
  readonly poolSize?: number | undefined;
  /** node-postgres statement_timeout for every connection (57014 -> store.cancelled). */
  readonly statementTimeoutMs?: number | undefined;
  /**
   * node-postgres: how long a new connection (or a wait for a free one) may take before it fails
   * as store.connection. Default 5 s (docs/adr/0067).
   */
  readonly connectTimeoutMs?: number | undefined;
  /** PGlite only: start from this dump of a data folder instead of an empty cluster (memory-template.ts). */
  readonly loadDataDir?: Blob | undefined;
}

/** The driver handle, for this package's migrator and tests only. */
export type NativeHandle = { readonly driver: 'postgres'; readonly pool: pg.Pool } | { readonly driver: 'pglite'; readonly client: PGlite };

export interface Database {
  readonly driver: 'postgres' | 'pglite';
  readonly native: NativeHandle;
  /**
   * One transaction in `scope`. Errors come out classified (StoreError), never as driver errors.
   * Never open another transaction inside `fn`: on PGlite that waits on the mutex forever.
   */
  transaction<T>(scope: TransactionScope, fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Shorthand for a tenant transaction. */
  tenant<T>(tenantId: string, fn: (tx: Tx) => Promise<T>, options?: { readonly deferFlush?: boolean }): Promise<T>;
  /**
   * ONE autocommitted statement as the connecting role (one round trip, its own transaction),
   * for the hot-path functions of sql/functions (repositories/hot-path.ts lists them), which set
   * the role and tenant themselves. A `PreparedStatement` is parsed and planned once per pooled connection (a named
   * statement) instead of once per call. Errors come out classified, as from `transaction`.
   */
  statement(query: SQL | PreparedStatement): Promise<Record<string, unknown>[]>;
  /** Run on the single PGlite connection exclusively (a no-op wrapper on PostgreSQL). */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * One adapter, two drivers (ARCHITECTURE.md "Processes"): node-postgres when a URL is given,
 * PGlite otherwise. Every transaction first switches role and tenant with SET LOCAL semantics
 * (set_config(..., true)), so the settings end with the transaction and never leak to the
 * next user of a pooled connection.
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  if (options.url) {
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      // docs/adr/0067: a connect nobody answers (a partition, a server half up) fails after this
      // instead of waiting forever, so a request answers 503 service.unavailable and /readyz
      // answers not ready while the database is gone. The same bound applies to waiting for a
      // free connection. The listener's own connection takes these options too.
      connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      // A dead peer is noticed on an idle connection too, not only at its next query.
      keepAlive: true,
      ...(options.statementTimeoutMs === undefined ? {} : { statement_timeout: options.statementTimeoutMs }),
    });
    // An idle client that loses its connection emits 'error' on the pool; without a listener
    // that is an uncaught exception. The pool discards the client; the next query reconnects.
    pool.on('error', () => undefined);
    // docs/adr/0067: a checked-out client (a transaction between two statements, e.g. while a
    // step's work runs) that loses its connection emits 'error' on ITSELF, where the pool's
    // listener is not attached: measured, a PostgreSQL restart killed every worker with an
    // uncaught 'error' event. Swallowed here: the statement in progress, or the next one, fails
    // with the connection error (classified store.connection), and the pool discards the client
    // when it is released.
    pool.on('connect', (client) => {
      client.on('error', () => undefined);
    });
    const db = drizzleNodePostgres({ client: pool });
    return new DrizzleDatabase('postgres', { driver: 'postgres', pool }, db, null, () => pool.end());
  }
  if (!options.dataDir) {
    throw new ConfigurationError('config.database_missing', 'Give a PostgreSQL url or a PGlite data folder.');
  }
  // Loaded only here (docs/adr/0048): a process on PostgreSQL never pays for PGlite's JS and wasm.
  const [{ PGlite }, { drizzle: drizzlePglite }] = await Promise.all([import('@electric-sql/pglite'), import('drizzle-orm/pglite')]);
  const client =
    options.loadDataDir === undefined ? new PGlite(options.dataDir) : new PGlite(options.dataDir, { loadDataDir: options.loadDataDir });
  await client.waitReady;
  const db = drizzlePglite({ client });
  return new DrizzleDatabase('pglite', { driver: 'pglite', client }, db, new Mutex(), () => client.close());
}

/** docs/adr/0067: long enough for a loaded server, short enough that a request answers in time. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

/** A statement with a fixed text, prepared once per connection under `name`. */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
  readonly values: readonly unknown[];
}

function isPrepared(query: SQL | PreparedStatement): query is PreparedStatement {
  return typeof (query as PreparedStatement).name === 'string' && typeof (query as PreparedStatement).text === 'string';
}

/** What both drivers' drizzle databases share. */
interface Transactional {
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  execute(query: SQL): Promise<{ rows: unknown[] }>;
}

class DrizzleDatabase implements Database {
  readonly driver: 'postgres' | 'pglite';
  readonly native: NativeHandle;
  readonly #db: Transactional;
  readonly #mutex: Mutex | null;
  readonly #close: () => Promise<void>;
  #closed = false;

  constructor(driver: 'postgres' | 'pglite', native: NativeHandle, db: Transactional, mutex: Mutex | null, close: () => Promise<void>) {
    this.driver = driver;
    this.native = native;
    this.#db = db;
    this.#mutex = mutex;
    this.#close = close;
  }

  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.#mutex ? this.#mutex.run(fn) : fn();
  }

  async transaction<T>(scope: TransactionScope, fn: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      return await this.exclusive(() =>
        this.#db.transaction(async (tx) => {
          await applyScope(tx, scope);
          return fn(tx);
        }),
      );
    } catch (error) {
      throw classifyDriverError(error);
    }
  }

  tenant<T>(tenantId: string, fn: (tx: Tx) => Promise<T>, options: { readonly deferFlush?: boolean } = {}): Promise<T> {
    return this.transaction(
      options.deferFlush === true ? { role: 'tenant', tenantId, deferFlush: true } : { role: 'tenant', tenantId },
      fn,
    );
  }

  async statement(query: SQL | PreparedStatement): Promise<Record<string, unknown>[]> {
    try {
      const result = await this.exclusive(() => (isPrepared(query) ? this.#prepared(query) : this.#db.execute(query)));
      return result.rows as Record<string, unknown>[];
    } catch (error) {
      throw classifyDriverError(error);
    }
  }

  #prepared(query: PreparedStatement): Promise<{ rows: unknown[] }> {
    const native = this.native;
    if (native.driver === 'postgres') return native.pool.query({ name: query.name, text: query.text, values: [...query.values] });
    return native.client.query(query.text, [...query.values]);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.exclusive(this.#close);
  }
}

async function applyScope(tx: Tx, scope: TransactionScope): Promise<void> {
  switch (scope.role) {
    case 'owner':
      return;
    case 'maintenance':
      await tx.execute(sql`select set_config('role', ${MAINTENANCE_ROLE}, true)`);
      return;
    case 'tenant':
      // set_config('role', ..., true) is SET LOCAL ROLE: the policies apply even to a superuser
      // connection, and the role ends with the transaction.
      if (scope.tenantId === null) {
        await tx.execute(sql`select set_config('role', ${APP_ROLE}, true)`);
      } else if (scope.deferFlush === true) {
        // In the same statement as the scope: deferring costs no round trip (docs/adr/0043).
        await tx.execute(
          sql`select set_config('role', ${APP_ROLE}, true), set_config(${TENANT_SETTING}, ${scope.tenantId}, true), set_config('synchronous_commit', 'off', true)`,
        );
      } else {
        await tx.execute(sql`select set_config('role', ${APP_ROLE}, true), set_config(${TENANT_SETTING}, ${scope.tenantId}, true)`);
      }
      return;
  }
}
