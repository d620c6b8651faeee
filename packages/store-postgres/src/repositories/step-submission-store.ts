import type { NewCallStep, NewStep, SessionStatus, StepSubmissionStore, SubmittedStep } from '@veetbot/ports';
import type { Database } from '../database';
import { hot, parsed, runFromJson, stepFromJson } from './hot-path';

/** The api's step storage: one statement per submitted step (sql/functions/veetbot_submit_step.sql, veetbot_submit_call.sql). */
export class PostgresStepSubmissionStore implements StepSubmissionStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  async submit(tenantId: string, step: NewStep): Promise<SubmittedStep> {
    const [result] = await this.#db.statement(
      hot('veetbot_submit_step', [tenantId, step.runId, step.stepNumber, JSON.stringify(step.batch), step.createdAt.toISOString()]),
    );
    return submitted(result?.result);
  }

  /**
   * The gateway's one-call step (docs/adr/0044): the step of the run whose batch holds the call
   * id, else a new one numbered max + 1, under the run's row lock (FOR NO KEY UPDATE: the
   * worker's foreign-key KEY SHARE locks do not wait on it), so two submissions of one call id,
   * in two api processes, find one step. One statement (sql/functions/veetbot_submit_call.sql;
   * docs/adr/0062), as submit is.
   */
  async submitCall(tenantId: string, call: NewCallStep): Promise<SubmittedStep> {
    const [result] = await this.#db.statement(
      hot('veetbot_submit_call', [tenantId, call.runId, call.callId, JSON.stringify(call.batch), call.createdAt.toISOString()]),
    );
    return submitted(result?.result);
  }
}

function submitted(result: unknown): SubmittedStep {
  const out = parsed(result) as { run: unknown; session_status?: string | null; step?: unknown; inserted?: boolean };
  if (out.run === null) return { run: null, sessionStatus: null, step: null, inserted: false };
  return {
    run: runFromJson(out.run),
    sessionStatus: (out.session_status ?? null) as SessionStatus | null,
    step: out.step === null || out.step === undefined ? null : stepFromJson(out.step),
    inserted: out.inserted === true,
  };
}
