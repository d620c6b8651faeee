import { VeetbotError } from './errors';

/**
 * The stable codes a store port may fail with. A driver's error is classified into one of
 * these by SQLSTATE (STYLE.md item 6, Effect's classifyError), so no caller above the adapter
 * ever reads a driver error or a SQLSTATE.
 *
 *   store.fenced             the run's lease fencing token no longer matches (a newer holder exists)
 *   store.invalid_transition the row's status does not allow the requested transition
 *   store.not_found          the row does not exist for this tenant (or is invisible to it)
 *   store.conflict           a unique key is held by a row this tenant cannot see
 *   store.unique_violation   SQLSTATE 23505 outside a dedup path
 *   store.constraint         23xxx other than 23505 (NOT NULL, foreign key, check)
 *   store.forbidden          42501: a row-level security check or a privilege refused the write
 *   store.serialization      40001 / 40P01: retry the whole transaction
 *   store.cancelled          57014: statement timeout or cancel request
 *   store.connection         08xxx or a socket error: the database could not be reached
 *   store.event_payload_refused  a tool event payload carried a field the rule forbids
 *   store.approval_binding   a decision named an arguments hash or policy version the approval no longer holds
 *   store.unknown            anything else
 */
export type StoreErrorCode =
  | 'store.fenced'
  | 'store.invalid_transition'
  | 'store.not_found'
  | 'store.conflict'
  | 'store.unique_violation'
  | 'store.constraint'
  | 'store.forbidden'
  | 'store.serialization'
  | 'store.cancelled'
  | 'store.connection'
  | 'store.event_payload_refused'
  | 'store.approval_binding'
  | 'store.unknown';

const RETRYABLE: ReadonlySet<StoreErrorCode> = new Set(['store.serialization', 'store.connection']);

export class StoreError extends VeetbotError {
  declare readonly code: StoreErrorCode;
  /** The driver's SQLSTATE when there was one (operator-facing only). */
  readonly sqlstate: string | null;

  constructor(code: StoreErrorCode, message: string, options: { sqlstate?: string | null; cause?: unknown } = {}) {
    super(code, message, { retryable: RETRYABLE.has(code), cause: options.cause });
    this.sqlstate = options.sqlstate ?? null;
  }

  /** Checks the code, not the prototype, so it survives two copies of this package. */
  static override isInstance(value: unknown): value is StoreError {
    return VeetbotError.isInstance(value) && typeof value.code === 'string' && value.code.startsWith('store.');
  }
}

/**
 * A write was refused because the caller's lease fence is stale: another owner acquired the
 * run's lease since (or the lease was released). The caller must stop working on the run.
 */
export class FencingError extends StoreError {
  readonly runId: string;
  constructor(runId: string) {
    super('store.fenced', 'The run lease fencing token no longer matches; another owner holds the run.');
    this.runId = runId;
  }

  static override isInstance(value: unknown): value is FencingError {
    return VeetbotError.isInstance(value) && value.code === 'store.fenced';
  }
}

/** The row's current status does not allow the transition (a terminal row is never rewritten). */
export class InvalidTransitionError extends StoreError {
  readonly currentStatus: string;
  readonly attempted: string;
  constructor(attempted: string, currentStatus: string) {
    super('store.invalid_transition', `Cannot ${attempted} from status ${currentStatus}.`);
    this.attempted = attempted;
    this.currentStatus = currentStatus;
  }

  static override isInstance(value: unknown): value is InvalidTransitionError {
    return VeetbotError.isInstance(value) && value.code === 'store.invalid_transition';
  }
}

/**
 * A decision named an arguments hash or a policy version the pending approval no longer holds
 * (docs/adr/0047): the call it decides changed since the decider read it, so it needs a new
 * decision. `mismatch` names what differs (the arguments are checked first).
 */
export class ApprovalBindingError extends StoreError {
  readonly mismatch: 'arguments_hash' | 'policy_version';
  constructor(mismatch: 'arguments_hash' | 'policy_version') {
    super('store.approval_binding', `The approval no longer holds the ${mismatch.replace('_', ' ')} the decision names.`);
    this.mismatch = mismatch;
  }

  static override isInstance(value: unknown): value is ApprovalBindingError {
    return VeetbotError.isInstance(value) && value.code === 'store.approval_binding';
  }
}
