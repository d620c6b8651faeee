import type { RunRow } from './run-store';
import type { SessionRow } from './session-store';

// The conventions every store follows are in stores.ts.

export type StepStatus = 'pending' | 'running' | 'completed';

export interface StepRow {
  readonly id: string;
  readonly tenantId: string;
  readonly runId: string;
  readonly stepNumber: number;
  /** The model step's batch of tool calls, as submitted. */
  readonly batch: unknown;
  readonly status: StepStatus;
  readonly createdAt: Date;
}

export interface NewStep {
  readonly runId: string;
  readonly stepNumber: number;
  readonly batch: unknown;
  readonly createdAt: Date;
  /**
   * Default `pending` (the api's: a worker will claim it). `running`: the caller runs it now,
   * under the run's lease (an in-process submission), so no second write marks it started.
   */
  readonly status?: 'pending' | 'running';
}

export interface StepStore {
  /** UNIQUE(run_id, step_number): a resubmitted step returns the stored one. */
  insert(
    tenantId: string,
    step: NewStep,
  ): Promise<{ readonly inserted: true; readonly row: StepRow } | { readonly inserted: false; readonly existing: StepRow }>;
  get(tenantId: string, runId: string, stepNumber: number): Promise<StepRow | null>;
  /**
   * The step with its run and the run's session, read together (one statement on PostgreSQL):
   * what a worker needs before it runs a step it claimed. null when the step does not exist
   * for this tenant.
   */
  getWithContext(tenantId: string, runId: string, stepNumber: number): Promise<StepContext | null>;
  setStatus(tenantId: string, runId: string, stepNumber: number, status: StepStatus): Promise<StepRow>;
}

export interface StepContext {
  readonly step: StepRow;
  readonly run: RunRow | null;
  readonly session: SessionRow | null;
}
