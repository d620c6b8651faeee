import pg from 'pg';
import type { Database } from '@veetbot/store-postgres';

/**
 * The hot-path functions whose commit is not flushed (migrations/0011, ADR 0015): the intent
 * and the claim reach the disk with the watermark's or the result's flushed commit.
 */
const DEFERRED_FLUSH = new Set(['veetbot_insert_intent', 'veetbot_claim']);

export interface CallCost {
  /** Commits per call. */
  readonly commits: number;
  /** Of those, commits whose flush is deferred (ADR 0015). */
  readonly deferred: number;
  /** Statements sent to the server per call (PostgreSQL only), or null on PGlite. */
  readonly statements: number | null;
}

/**
 * Statements and COMMITs sent through node-postgres while `fn` runs `calls` times, counted by
 * wrapping pg's Client.query (the store, the floor and DBOS all use the one pg@8.23.1 in the
 * workspace). An autocommitted statement counts as a statement, not a COMMIT.
 */
export async function countPgStatements(calls: number, fn: () => Promise<void>): Promise<{ statements: number; commitStatements: number }> {
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  let statements = 0;
  let commitStatements = 0;
  prototype.query = function counted(this: unknown, ...args: unknown[]) {
    statements += 1;
    const first = args[0];
    const text =
      typeof first === 'string'
        ? first
        : typeof first === 'object' && first !== null && 'text' in first
          ? String((first as { text: unknown }).text)
          : '';
    if (/^\s*commit\b/i.test(text)) commitStatements += 1;
    return original.apply(this, args);
  };
  try {
    for (let i = 0; i < calls; i++) await fn();
  } finally {
    prototype.query = original;
  }
  return { statements: statements / calls, commitStatements: commitStatements / calls };
}

/**
 * What one governed call costs, observed rather than read from the code: every store write is
 * either one `database.transaction(...)` or one autocommitted `database.statement(...)` (the
 * hot path's stored functions) — one commit each — so wrapping both methods on the handle counts
 * commits on either driver. On PostgreSQL the statements are counted too, and the explicit
 * COMMITs seen must equal the transactions opened.
 */
export async function measureCallCost(database: Database, calls: number, fn: () => Promise<void>): Promise<CallCost> {
  const handle = database as { transaction: Database['transaction']; statement: Database['statement'] };
  const original = handle.transaction;
  const originalStatement = handle.statement;
  let transactions = 0;
  let autocommitted = 0;
  let deferred = 0;
  handle.transaction = function counted(this: Database, ...args: Parameters<Database['transaction']>) {
    transactions += 1;
    return original.apply(this, args);
  } as Database['transaction'];
  handle.statement = function countedStatement(this: Database, ...args: Parameters<Database['statement']>) {
    autocommitted += 1;
    const query = args[0];
    if ('name' in query && DEFERRED_FLUSH.has(query.name)) deferred += 1;
    return originalStatement.apply(this, args);
  } as Database['statement'];
  let pgCounts: { statements: number; commitStatements: number } | null = null;
  try {
    if (database.driver === 'postgres') pgCounts = await countPgStatements(calls, fn);
    else for (let i = 0; i < calls; i++) await fn();
  } finally {
    // The method lives on the prototype: removing the own property restores it.
    delete (handle as Partial<typeof handle>).transaction;
    delete (handle as Partial<typeof handle>).statement;
  }
  const commits = (transactions + autocommitted) / calls;
  if (pgCounts !== null && pgCounts.commitStatements !== transactions / calls) {
    throw new Error(
      `commit count disagrees: ${transactions / calls} transactions opened per call, ${pgCounts.commitStatements} COMMIT statements seen`,
    );
  }
  return { commits, deferred: deferred / calls, statements: pgCounts?.statements ?? null };
}
