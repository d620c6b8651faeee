import { VeetbotError } from '@veetbot/domain';

/**
 * The runtime's typed refusals. Not-found codes are what the API maps to 404: another
 * tenant's run is "not found", never "forbidden" (ports/stores.ts: row-level security makes
 * it invisible, so the runtime cannot even tell the difference).
 */
export type RuntimeErrorCode =
  | 'runtime.session_not_found'
  | 'runtime.session_closed'
  // openSession's options refused (deferred tools outside the pin, or control tools; docs/adr/0035).
  | 'runtime.session_invalid'
  | 'runtime.run_not_found'
  | 'runtime.run_not_active'
  | 'runtime.run_busy'
  // docs/adr/0070: a claimed step of a tenant at its concurrency quota; it stays pending.
  | 'runtime.tenant_over_quota'
  | 'runtime.run_invalid'
  | 'runtime.step_invalid'
  | 'runtime.step_conflict'
  | 'runtime.principal_mismatch'
  // § Control tools (docs/adr/0034).
  | 'runtime.run_waiting_for_user'
  | 'runtime.question_not_found'
  | 'runtime.question_answered'
  | 'runtime.answer_invalid';

/** Retryable: another worker (or this one) holds the run's lease, or the tenant is at its step quota. */
const RETRYABLE: ReadonlySet<RuntimeErrorCode> = new Set(['runtime.run_busy', 'runtime.tenant_over_quota']);

export class RuntimeError extends VeetbotError {
  declare readonly code: RuntimeErrorCode;
  constructor(code: RuntimeErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, { retryable: RETRYABLE.has(code), cause: options.cause });
  }

  static override isInstance(value: unknown): value is RuntimeError {
    return VeetbotError.isInstance(value) && typeof value.code === 'string' && value.code.startsWith('runtime.');
  }
}

export const runNotFound = (): RuntimeError => new RuntimeError('runtime.run_not_found', 'No such run.');
export const sessionNotFound = (): RuntimeError => new RuntimeError('runtime.session_not_found', 'No such session.');
export const runBusy = (): RuntimeError => new RuntimeError('runtime.run_busy', 'Another worker holds this run right now; retry shortly.');
