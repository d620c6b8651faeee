import type {
  NewStep,
  StepContext,
  StepFinish,
  StepFinished,
  StepOpening,
  StepOpeningRequest,
  StepRow,
  StepStatus,
  StepStore,
} from '@veetbot/ports';
import { NO_TENANT_STEP_QUOTAS, TERMINAL_INVOCATION_STATUSES, type TenantStepQuotas, tenantStepQuota } from '@veetbot/domain';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../database';
import { steps } from '../schema';
import { encodeStep, STEP_DONE_CHANNEL } from '../step-queue/wake-ups';
import { notFound } from './not-found';
import { evidenceFromJson, hot, parsed, rowFromJson, runFromJson, sessionFromJson, stepFromJson, tallyFromJson } from './hot-path';

/** What the finish counts as a concluded call: the domain's terminal statuses, its one home. */
const TERMINAL = [...TERMINAL_INVOCATION_STATUSES];

export class PostgresStepStore implements StepStore {
  readonly #db: Database;
  readonly #quotas: TenantStepQuotas;
  /** `quotas`: the operator's per-tenant concurrency quotas, checked when a worker opens a claimed step (docs/adr/0070). */
  constructor(db: Database, quotas: TenantStepQuotas = NO_TENANT_STEP_QUOTAS) {
    this.#db = db;
    this.#quotas = quotas;
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

  /** One statement (sql/functions/veetbot_open_step.sql; docs/adr/0049). */
  async open(tenantId: string, opening: StepOpeningRequest): Promise<StepOpening> {
    const [result] = await this.#db.statement(
      hot('veetbot_open_step', [
        tenantId,
        opening.runId,
        opening.stepNumber,
        opening.batch === null ? null : JSON.stringify(opening.batch),
        opening.createdAt.toISOString(),
        opening.owner,
        opening.leaseExpiresAt.toISOString(),
        opening.now.toISOString(),
        opening.tallyHeld?.fencingToken ?? null,
        opening.tallyHeld?.throughStep ?? null,
        // Only a worker's claimed step counts against the quota: an in-process submission is
        // run by the caller that stores it, and nothing queues it.
        opening.batch === null ? tenantStepQuota(this.#quotas, tenantId) : null,
      ]),
    );
    const out = parsed(result?.result) as Record<string, unknown> & { kind: StepOpening['kind'] };
    switch (out.kind) {
      case 'run_not_found':
      case 'busy':
      case 'waiting_for_user':
      case 'step_not_found':
      case 'over_quota':
        return { kind: out.kind };
      case 'run_not_active':
      case 'session_not_found':
        return { kind: out.kind, run: runFromJson(out.run) };
      case 'session_closed':
        return { kind: out.kind, run: runFromJson(out.run), session: sessionFromJson(out.session) };
      case 'opened':
        return {
          kind: 'opened',
          run: runFromJson(out.run),
          session: sessionFromJson(out.session),
          step: stepFromJson(out.step),
          inserted: out.inserted === true,
          earlier: out.earlier === null || out.earlier === undefined ? null : tallyFromJson(out.earlier),
          evidence: evidenceFromJson(out.evidence),
          later: out.later === null || out.later === undefined ? null : tallyFromJson(out.later),
          delegated: out.delegated === null || out.delegated === undefined ? null : Number(out.delegated),
        };
    }
  }

  /** One statement (sql/functions/veetbot_finish_step.sql; docs/adr/0049). */
  async finish(tenantId: string, finish: StepFinish): Promise<StepFinished> {
    const [result] = await this.#db.statement(
      hot('veetbot_finish_step', [
        tenantId,
        finish.runId,
        finish.stepNumber,
        finish.fencingToken,
        [...finish.callIds],
        TERMINAL,
        finish.failReason,
        finish.at.toISOString(),
        finish.notifyDone === true ? STEP_DONE_CHANNEL : null,
        finish.notifyDone === true ? encodeStep({ tenantId, runId: finish.runId, stepNumber: finish.stepNumber }) : null,
        finish.breakerEvidence === undefined || finish.breakerEvidence === null ? null : JSON.stringify(finish.breakerEvidence),
      ]),
    );
    const out = parsed(result?.result) as { rows: unknown[]; complete: unknown; failed: unknown; released: unknown };
    return {
      rows: out.rows.map(rowFromJson),
      complete: out.complete === true,
      failed: out.failed === null || out.failed === undefined ? null : runFromJson(out.failed),
      released: out.released === true,
    };
  }
}
