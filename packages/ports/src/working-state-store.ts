// § Control tools, context.update_working_state (docs/adr/0034).
// The conventions every store follows are in stores.ts.

/** One version of a run's working-state document. */
export interface WorkingStateRow {
  readonly tenantId: string;
  readonly runId: string;
  /** 1 for the first write, then one more per write. */
  readonly version: number;
  readonly document: Record<string, unknown>;
  /** The context.update_working_state call that wrote it. */
  readonly invocationId: string;
  readonly createdAt: Date;
}

export interface NewWorkingState {
  readonly runId: string;
  readonly document: Record<string, unknown>;
  readonly invocationId: string;
  readonly createdAt: Date;
  /** The version the writer read; the write is refused when the latest is another. Absent: append to whatever is latest. */
  readonly expectedVersion?: number;
}

export type AppendWorkingStateResult =
  | { readonly kind: 'written'; readonly row: WorkingStateRow }
  /** The expected version is not the latest (`latest`: 0 when nothing was written yet). */
  | { readonly kind: 'version_conflict'; readonly latest: number };

export interface WorkingStateStore {
  /**
   * Write the next version. Idempotent on invocationId: the same call written again (a recovered
   * attempt) answers the version it wrote the first time, whatever was written since.
   */
  append(tenantId: string, state: NewWorkingState): Promise<AppendWorkingStateResult>;
  /** The latest version, or a given one; null when there is none. */
  get(tenantId: string, runId: string, version?: number): Promise<WorkingStateRow | null>;
}
