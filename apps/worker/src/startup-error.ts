import { VeetbotError } from '@veetbot/domain';

/**
 * Why the worker would not start. `main` prints one line, `<code>: <message>`, and exits 1:
 * an operator reading a crash loop sees what to fix, not a stack trace.
 */
export type StartupErrorCode =
  | 'startup.database_url_required'
  | 'startup.database_unreachable'
  | 'startup.migration_failed'
  | 'startup.config_invalid';

export class StartupError extends VeetbotError {
  declare readonly code: StartupErrorCode;
  constructor(code: StartupErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, { cause: options.cause });
  }
}
