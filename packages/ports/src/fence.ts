/** A run lease held by one worker; every execution write is checked against it (fencing). */
export interface LeaseFence {
  readonly runId: string;
  /** Strictly increases on every acquisition of the run's lease. */
  readonly fencingToken: number;
}
