import { FencingError, type RunFailureReason } from '@veetbot/domain';
import type { AcquiredLease, AcquiredRunLease, LeaseFence, NewRun, RunRow, RunStatus, RunStore } from '@veetbot/ports';
import { and, asc, eq, isNotNull, isNull, lte, or, sql } from 'drizzle-orm';
import type { Database } from '../database';
import { runs } from '../schema';
import { hot } from './hot-path';
import { notFound } from './not-found';

const TERMINAL_RUN: ReadonlySet<RunStatus> = new Set(['succeeded', 'failed', 'cancelled']);

export class PostgresRunStore implements RunStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  create(tenantId: string, run: NewRun): Promise<RunRow> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx
        .insert(runs)
        .values({ ...run, tenantId, parentRunId: run.parentRunId ?? null })
        .returning();
      if (!row) throw notFound('The run');
      return row;
    });
  }

  get(tenantId: string, runId: string): Promise<RunRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx.select().from(runs).where(eq(runs.id, runId));
      return row ?? null;
    });
  }

  /**
   * One conditional UPDATE: PostgreSQL re-checks the WHERE clause against the latest row
   * version after waiting for a concurrent acquirer, so exactly one of two racing workers
   * gets the lease, and the fencing token increments on every acquisition.
   */
  acquireLease(tenantId: string, runId: string, owner: string, ttlMs: number, now: Date): Promise<AcquiredRunLease | null> {
    // Not flushed (docs/adr/0043): a lease lost in a server crash is one the worker can no longer
    // use (its connections died with the server), and the next flushed commit makes it durable.
    return this.#db.tenant(
      tenantId,
      async (tx) => {
        const [acquired] = await tx
          .update(runs)
          .set({ leaseOwner: owner, leaseExpiresAt: new Date(now.getTime() + ttlMs), fencingToken: sql`${runs.fencingToken} + 1` })
          .where(
            and(
              eq(runs.id, runId),
              or(isNull(runs.leaseOwner), isNull(runs.leaseExpiresAt), eq(runs.leaseOwner, owner), lte(runs.leaseExpiresAt, now)),
            ),
          )
          .returning();
        // The whole row: the runtime reads the run's status from it rather than read it again.
        if (acquired?.leaseExpiresAt)
          return { fencingToken: acquired.fencingToken, leaseExpiresAt: acquired.leaseExpiresAt, run: acquired };
        const [exists] = await tx.select({ id: runs.id }).from(runs).where(eq(runs.id, runId));
        if (!exists) throw notFound('The run');
        return null;
      },
      { deferFlush: true },
    );
  }

  renewLease(tenantId: string, fence: LeaseFence, ttlMs: number, now: Date): Promise<AcquiredLease> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [renewed] = await tx
        .update(runs)
        .set({ leaseExpiresAt: new Date(now.getTime() + ttlMs) })
        .where(and(eq(runs.id, fence.runId), eq(runs.fencingToken, fence.fencingToken), isNotNull(runs.leaseOwner)))
        .returning({ fencingToken: runs.fencingToken, leaseExpiresAt: runs.leaseExpiresAt });
      if (!renewed?.leaseExpiresAt) throw new FencingError(fence.runId);
      return { fencingToken: renewed.fencingToken, leaseExpiresAt: renewed.leaseExpiresAt };
    });
  }

  releaseLease(tenantId: string, fence: LeaseFence): Promise<boolean> {
    // Not flushed (docs/adr/0043): a release lost in a server crash leaves a lease that expires.
    return this.#db.tenant(
      tenantId,
      async (tx) => {
        const released = await tx
          .update(runs)
          .set({ leaseOwner: null, leaseExpiresAt: null })
          .where(and(eq(runs.id, fence.runId), eq(runs.fencingToken, fence.fencingToken), isNotNull(runs.leaseOwner)))
          .returning({ id: runs.id });
        return released.length === 1;
      },
      { deferFlush: true },
    );
  }

  complete(tenantId: string, runId: string, result: string, at: Date): Promise<RunRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx
        .update(runs)
        .set({ status: 'succeeded', finishedAt: at, result, failureReason: null })
        .where(and(eq(runs.id, runId), eq(runs.status, 'running')))
        .returning();
      if (row) return row;
      const [exists] = await tx.select({ id: runs.id }).from(runs).where(eq(runs.id, runId));
      if (!exists) throw notFound('The run');
      return null;
    });
  }

  /** One statement (sql/functions/veetbot_delegated_calls.sql; docs/adr/0050). */
  async delegatedCalls(tenantId: string, runId: string): Promise<number> {
    const [result] = await this.#db.statement(hot('veetbot_delegated_calls', [tenantId, runId]));
    return Number(result?.result ?? 0);
  }

  listChildren(tenantId: string, parentRunId: string): Promise<RunRow[]> {
    return this.#db.tenant(tenantId, (tx) => tx.select().from(runs).where(eq(runs.parentRunId, parentRunId)).orderBy(asc(runs.createdAt)));
  }

  setStatus(tenantId: string, runId: string, status: RunStatus, at: Date, failureReason?: RunFailureReason): Promise<RunRow> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx
        .update(runs)
        .set({
          status,
          ...(TERMINAL_RUN.has(status) ? { finishedAt: at } : {}),
          failureReason: status === 'failed' ? (failureReason ?? null) : null,
        })
        .where(eq(runs.id, runId))
        .returning();
      if (!row) throw notFound('The run');
      return row;
    });
  }
}
