import { VeetbotError } from '@veetbot/domain';

export type StartupErrorCode = 'startup.config_invalid' | 'startup.database_unreachable' | 'startup.port_in_use' | 'startup.failed';

/** A start-up failure: printed as one line, `error <code>: <message>`, and the process exits 1. */
export class StartupError extends VeetbotError {
  declare readonly code: StartupErrorCode;
  constructor(code: StartupErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, { cause: options.cause });
  }
}

/** The one line printed for a start-up failure (no stack: the code and message say what to fix). */
export function startupErrorLine(error: unknown): string {
  if (error instanceof StartupError) return `error ${error.code}: ${error.message}`;
  const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
  return `error startup.failed: ${detail}`;
}
