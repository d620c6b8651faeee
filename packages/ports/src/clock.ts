/** Time, injectable so tests and recovery reason about one clock. */
export interface Clock {
  now(): Date;
}
