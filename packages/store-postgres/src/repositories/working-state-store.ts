import type { AppendWorkingStateResult, NewWorkingState, WorkingStateRow, WorkingStateStore } from '@veetbot/ports';
import { and, desc, eq } from 'drizzle-orm';
import type { Database } from '../database';
import { runs, workingStates } from '../schema';
import { notFound } from './not-found';

/** § Control tools, context.update_working_state: versions of a run's working state (docs/adr/0034). */
export class PostgresWorkingStateStore implements WorkingStateStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  append(tenantId: string, state: NewWorkingState): Promise<AppendWorkingStateResult> {
    return this.#db.tenant(tenantId, async (tx) => {
      // The run's row lock serializes writers of one run, so "latest + 1" is never taken twice.
      const [run] = await tx.select({ id: runs.id }).from(runs).where(eq(runs.id, state.runId)).for('update');
      if (!run) throw notFound('The run');
      const [again] = await tx.select().from(workingStates).where(eq(workingStates.invocationId, state.invocationId));
      if (again) return { kind: 'written', row: again };
      const [latest] = await tx
        .select({ version: workingStates.version })
        .from(workingStates)
        .where(eq(workingStates.runId, state.runId))
        .orderBy(desc(workingStates.version))
        .limit(1);
      const current = latest?.version ?? 0;
      if (state.expectedVersion !== undefined && state.expectedVersion !== current) return { kind: 'version_conflict', latest: current };
      const [row] = await tx
        .insert(workingStates)
        .values({
          tenantId,
          runId: state.runId,
          version: current + 1,
          document: state.document,
          invocationId: state.invocationId,
          createdAt: state.createdAt,
        })
        .returning();
      if (!row) throw notFound('The working state');
      return { kind: 'written', row };
    });
  }

  get(tenantId: string, runId: string, version?: number): Promise<WorkingStateRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx
        .select()
        .from(workingStates)
        .where(
          version === undefined ? eq(workingStates.runId, runId) : and(eq(workingStates.runId, runId), eq(workingStates.version, version)),
        )
        .orderBy(desc(workingStates.version))
        .limit(1);
      return row ?? null;
    });
  }
}
