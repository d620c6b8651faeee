import type { NewStep, SessionStatus, StepSubmissionStore, SubmittedStep } from '@veetbot/ports';
import type { Database } from '../database';
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
}
