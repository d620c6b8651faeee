import type { NewStep, StepContext, StepRow, StepStatus, StepStore } from '@veetbot/ports';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../database';
import { steps } from '../schema';
import { notFound } from './not-found';
import { hot, parsed, runFromJson, sessionFromJson, stepFromJson } from './hot-path';

export class PostgresStepStore implements StepStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  insert(tenantId: string, step: NewStep): Promise<{ inserted: true; row: StepRow } | { inserted: false; existing: StepRow }> {
    // A step stored RUNNING is run now by the process that stores it: its row is flushed by the
    // first flushed commit of its calls, and lost in a server crash only with the step itself
    // (docs/adr/0043). A PENDING step is a promise to a client and is flushed.
    const deferFlush = step.status === 'running';
    return this.#db.tenant(
      tenantId,
      async (tx) => {
        const [row] = await tx
          .insert(steps)
          .values({
            tenantId,
            runId: step.runId,
            stepNumber: step.stepNumber,
            batch: step.batch,
            status: step.status ?? 'pending',
            createdAt: step.createdAt,
          })
          .onConflictDoNothing({ target: [steps.runId, steps.stepNumber] })
          .returning();
        if (row) return { inserted: true as const, row };
        const [existing] = await tx
          .select()
          .from(steps)
          .where(and(eq(steps.runId, step.runId), eq(steps.stepNumber, step.stepNumber)));
        if (!existing) throw notFound('The step');
        return { inserted: false as const, existing };
      },
      { deferFlush },
    );
  }

  get(tenantId: string, runId: string, stepNumber: number): Promise<StepRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx
        .select()
        .from(steps)
        .where(and(eq(steps.runId, runId), eq(steps.stepNumber, stepNumber)));
      return row ?? null;
    });
  }

  /** One statement (sql/functions/veetbot_step_context.sql): a worker reads this for every step it runs. */
  async getWithContext(tenantId: string, runId: string, stepNumber: number): Promise<StepContext | null> {
    const [result] = await this.#db.statement(hot('veetbot_step_context', [tenantId, runId, stepNumber]));
    const out = parsed(result?.result) as { step: unknown; run?: unknown; session?: unknown };
    if (out.step === null || out.step === undefined) return null;
    return {
      step: stepFromJson(out.step),
      run: out.run === null || out.run === undefined ? null : runFromJson(out.run),
      session: out.session === null || out.session === undefined ? null : sessionFromJson(out.session),
    };
  }

  setStatus(tenantId: string, runId: string, stepNumber: number, status: StepStatus): Promise<StepRow> {
    // RUNNING and COMPLETED follow from the invocation rows, which are flushed where they
    // protect something: a status lost in a server crash is derived again when the step is
    // resubmitted or swept, every call deduping to its recorded outcome (docs/adr/0043).
    const deferFlush = status === 'running' || status === 'completed';
    return this.#db.tenant(
      tenantId,
      async (tx) => {
        const [row] = await tx
          .update(steps)
          .set({ status })
          .where(and(eq(steps.runId, runId), eq(steps.stepNumber, stepNumber)))
          .returning();
        if (!row) throw notFound('The step');
        return row;
      },
      { deferFlush },
    );
  }
}
