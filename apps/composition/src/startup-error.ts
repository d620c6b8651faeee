import { VeetbotError } from '@veetbot/domain';

/**
 * Why a process would not start. Every role prints one line, `error <code>: <message>`, and
 * exits 1: an operator reading a crash loop sees what to fix, not a stack trace.
 */
export type StartupErrorCode =
  | 'startup.config_invalid'
  | 'startup.database_url_required'
  | 'startup.database_unreachable'
  /** The server answered but the database DATABASE_URL names does not exist (SQLSTATE 3D000). */
  | 'startup.database_missing'
  | 'startup.migration_failed'
  /** The embedded PGlite folder is open in another live process (PGlite belongs to one process). */
  | 'startup.database_in_use'
  | 'startup.port_in_use'
  | 'startup.failed';

export class StartupError extends VeetbotError {
  declare readonly code: StartupErrorCode;
  constructor(code: StartupErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, { cause: options.cause });
  }
}

/** The one line printed for a start-up failure (no stack: the code and message say what to fix). */
export function startupErrorLine(error: unknown): string {
  if (error instanceof StartupError) return `error ${error.code}: ${error.message.split('\n').join(' ')}`;
  const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
  return `error startup.failed: ${detail}`;
}
