import type { NewCallStep, NewStep, SessionStatus, StepSubmissionStore, SubmittedStep } from '@veetbot/ports';
import { and, eq, max, sql } from 'drizzle-orm';
import type { Database } from '../database';
import { runs, sessions, steps } from '../schema';
import { hot, parsed, runFromJson, stepFromJson } from './hot-path';

/** The api's step storage: one statement per submitted step (sql/functions/veetbot_submit_step.sql). */
export class PostgresStepSubmissionStore implements StepSubmissionStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  async submit(tenantId: string, step: NewStep): Promise<SubmittedStep> {
    const [result] = await this.#db.statement(
      hot('veetbot_submit_step', [tenantId, step.runId, step.stepNumber, JSON.stringify(step.batch), step.createdAt.toISOString()]),
    );
    const out = parsed(result?.result) as { run: unknown; session_status?: string | null; step?: unknown; inserted?: boolean };
    if (out.run === null) return { run: null, sessionStatus: null, step: null, inserted: false };
    return {
      run: runFromJson(out.run),
      sessionStatus: (out.session_status ?? null) as SessionStatus | null,
      step: out.step === null || out.step === undefined ? null : stepFromJson(out.step),
      inserted: out.inserted === true,
    };
  }

  /**
   * The gateway's one-call step (docs/adr/0044). The run's row lock (FOR NO KEY UPDATE: the
   * foreign keys' KEY SHARE locks of the worker's inserts do not wait on it) serialises
   * gateway submissions to one run across processes, so "is this call id already a step" and
   * "the next step number" are read and acted on with no other submission in between.
   */
  submitCall(tenantId: string, call: NewCallStep): Promise<SubmittedStep> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [run] = await tx.select().from(runs).where(eq(runs.id, call.runId)).for('no key update');
      if (run === undefined) return { run: null, sessionStatus: null, step: null, inserted: false };
      // jsonb containment: the step whose batch holds a call with this call id.
      const holding = JSON.stringify([{ call_id: call.callId }]);
      const [existing] = await tx
        .select()
        .from(steps)
        .where(and(eq(steps.runId, run.id), sql`${steps.batch} -> 'calls' @> ${holding}::jsonb`))
        .orderBy(steps.stepNumber)
        .limit(1);
      const [session] = await tx.select({ status: sessions.status }).from(sessions).where(eq(sessions.id, run.sessionId));
      const sessionStatus = (session?.status ?? null) as SessionStatus | null;
      if (existing !== undefined) return { run, sessionStatus, step: existing, inserted: false };
      if (run.status !== 'running' || sessionStatus !== 'open') return { run, sessionStatus, step: null, inserted: false };
      const [last] = await tx
        .select({ n: max(steps.stepNumber) })
        .from(steps)
        .where(eq(steps.runId, run.id));
      const [row] = await tx
        .insert(steps)
        .values({
          tenantId,
          runId: run.id,
          stepNumber: (last?.n ?? 0) + 1,
          batch: call.batch,
          status: 'pending',
          createdAt: call.createdAt,
        })
        .returning();
      return { run, sessionStatus, step: row ?? null, inserted: row !== undefined };
    });
  }
}
