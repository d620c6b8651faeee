import { FencingError, InvalidTransitionError, StoreError, type StoreErrorCode, VeetbotError } from '@veetbot/domain';

/**
 * Driver errors -> StoreError by SQLSTATE (STYLE.md item 6, after Effect's classifyError).
 * Nothing above this adapter sees a driver error: node-postgres and PGlite both report the
 * server's SQLSTATE in `code`, and drizzle wraps them in a DrizzleQueryError whose `cause` is
 * the driver's error, so the chain is walked.
 *
 * The message is fixed per code: a driver message can carry row data ("Key (x)=(...)"), which
 * stays on `cause` for an operator and never becomes the error's text.
 */
export function classifyDriverError(error: unknown): VeetbotError {
  if (VeetbotError.isInstance(error)) return error;
  const found = findDriverDetail(error);
  const sqlstate = found.sqlstate;
  const raised = fromHotPathFunction(sqlstate, found);
  if (raised) return raised;
  const [code, message] = classify(sqlstate, found.socketCode, found.messages);
  const detail = found.constraint ? `${message} (constraint ${found.constraint})` : message;
  return new StoreError(code, detail, { sqlstate, cause: error });
}

/** The name of the constraint a unique violation hit, when the driver reported it. */
export function violatedConstraint(error: unknown): string | null {
  return findDriverDetail(error).constraint;
}

function classify(sqlstate: string | null, socketCode: string | null, messages: readonly string[]): [StoreErrorCode, string] {
  if (sqlstate !== null) {
    if (sqlstate === '23505') return ['store.unique_violation', 'A unique constraint refused the write.'];
    if (sqlstate.startsWith('23')) return ['store.constraint', 'An integrity constraint refused the write.'];
    if (sqlstate === '40001' || sqlstate === '40P01')
      return ['store.serialization', 'The transaction lost a serialization race; retry it.'];
    if (sqlstate === '57014') return ['store.cancelled', 'The statement was cancelled (timeout or cancel request).'];
    if (sqlstate.startsWith('08') || sqlstate === '57P01' || sqlstate === '57P02' || sqlstate === '57P03')
      return ['store.connection', 'The database connection failed.'];
    if (sqlstate === '42501') return ['store.forbidden', 'Row-level security or a privilege refused the operation.'];
    if (sqlstate === '55000') return ['store.invalid_transition', 'The row is in a state that does not allow this change.'];
    return ['store.unknown', `The database reported SQLSTATE ${sqlstate}.`];
  }
  if (socketCode !== null && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH)$/.test(socketCode)) {
    return ['store.connection', 'The database could not be reached.'];
  }
  if (
    messages.some((m) =>
      /connection terminated|timeout exceeded when trying to connect|PGlite is closed|Client has encountered a connection error|Client was closed and is not queryable|^timeout expired$/i.test(
        m,
      ),
    )
  ) {
    return ['store.connection', 'The database connection failed.'];
  }
  return ['store.unknown', 'The database operation failed.'];
}

/**
 * The SQLSTATEs the functions of sql/functions raise (veetbot_assert_fence.sql,
 * veetbot_refuse_write.sql, veetbot_insert_intent.sql, veetbot_request_approval.sql) become
 * the store's typed errors. Their MESSAGE and DETAIL are ours: the
 * attempted change and the current status, or the run id the caller gave; never row data.
 */
function fromHotPathFunction(sqlstate: string | null, found: DriverDetail): VeetbotError | null {
  switch (sqlstate) {
    case 'VBF01':
      return new FencingError(found.detail ?? '');
    case 'VBT01':
      return new InvalidTransitionError(found.serverMessage ?? 'change', found.detail ?? 'unknown');
    case 'VBN01':
      return new StoreError('store.not_found', found.serverMessage ?? 'The row does not exist for this tenant.');
    case 'VBC01':
      return new StoreError('store.conflict', found.serverMessage ?? 'The idempotency key is not available.');
    default:
      return null;
  }
}

interface DriverDetail {
  sqlstate: string | null;
  socketCode: string | null;
  constraint: string | null;
  /** The server's DETAIL field of the first error in the chain that has one. */
  detail: string | null;
  /** The message of the error that carried the SQLSTATE (the server's own text). */
  serverMessage: string | null;
  messages: string[];
}

function findDriverDetail(error: unknown): DriverDetail {
  const detail: DriverDetail = { sqlstate: null, socketCode: null, constraint: null, detail: null, serverMessage: null, messages: [] };
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const current = queue.shift();
    if (typeof current !== 'object' || current === null || seen.has(current)) continue;
    seen.add(current);
    const record = current as Record<string, unknown>;
    const code = record.code;
    if (typeof code === 'string') {
      if (/^[0-9A-Z]{5}$/.test(code)) {
        if (detail.sqlstate === null && typeof record.message === 'string') detail.serverMessage = record.message;
        detail.sqlstate ??= code;
      } else detail.socketCode ??= code;
    }
    if (typeof record.constraint === 'string') detail.constraint ??= record.constraint;
    if (typeof record.detail === 'string') detail.detail ??= record.detail;
    if (typeof record.message === 'string') detail.messages.push(record.message);
    queue.push(record.cause);
    // AggregateError (pg connecting to several addresses) keeps the real errors in `errors`.
    if (Array.isArray(record.errors)) queue.push(...(record.errors as unknown[]));
  }
  return detail;
}
