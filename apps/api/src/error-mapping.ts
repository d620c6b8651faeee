import { VeetbotError } from '@veetbot/domain';
import { ApiError, notFound, unavailable } from './api-error';

/** What the request was about, for the messages of the codes that depend on it. */
const INTERNAL_MESSAGE = 'An internal error occurred; it has been logged.';

/**
 * Every typed error of the layers below, mapped to one stable API error (STYLE.md: codes, not
 * strings). Anything unrecognised is a 500 `internal` whose message says nothing about it; the
 * caller logs the original.
 */
export function toApiError(error: unknown): { readonly error: ApiError; readonly internal: boolean } {
  if (ApiError.isApiError(error)) return { error, internal: false };
  if (!VeetbotError.isInstance(error)) return { error: new ApiError(500, 'internal', INTERNAL_MESSAGE), internal: true };
  switch (error.code) {
    // Another tenant's row is invisible (row-level security): "not found", like a missing one.
    case 'runtime.run_not_found':
    case 'runtime.session_not_found':
    case 'store.not_found':
    case 'blob.invalid_artifact_id':
      return { error: notFound(), internal: false };
    case 'runtime.session_closed':
      return { error: new ApiError(409, 'session.closed', 'The session is closed.'), internal: false };
    case 'runtime.run_not_active':
      return { error: new ApiError(409, 'run.not_active', 'The run is not running.'), internal: false };
    case 'runtime.run_waiting_for_user':
      return { error: new ApiError(409, 'run.waiting_for_user', error.message), internal: false };
    case 'runtime.question_not_found':
      return { error: notFound(), internal: false };
    case 'runtime.question_answered':
      return { error: new ApiError(409, 'question.already_answered', error.message), internal: false };
    case 'runtime.answer_invalid':
      return { error: new ApiError(400, 'request.invalid', error.message), internal: false };
    case 'runtime.step_conflict':
      return { error: new ApiError(409, 'step.conflict', 'This step number already holds a different batch.'), internal: false };
    case 'runtime.step_invalid':
    case 'runtime.run_invalid':
    case 'runtime.session_invalid':
      return { error: new ApiError(400, 'request.invalid', error.message), internal: false };
    case 'runtime.run_busy':
      return { error: unavailable('run.busy', 'Another worker holds this run right now; retry shortly.'), internal: false };
    case 'store.invalid_transition':
      return { error: new ApiError(409, 'conflict', 'The resource is not in a state that allows this.'), internal: false };
    case 'store.serialization':
    case 'store.connection':
    case 'store.cancelled':
      return { error: unavailable('service.unavailable', 'The database is unavailable right now; retry shortly.'), internal: true };
    default:
      return { error: new ApiError(500, 'internal', INTERNAL_MESSAGE), internal: true };
  }
}
