import path from 'node:path';

/** Read when no outboxPath option is given. */
export const OUTBOX_PATH_ENV = 'VEETBOT_OUTBOX_PATH';
/** Relative to the process's working directory; deliberately never derived from a workspace. */
export const DEFAULT_OUTBOX_RELATIVE_PATH = '.veetbot/outbox.log';

export interface OutboxPathSources {
  readonly outboxPath?: string | undefined;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
}

/**
 * Where demo.external_write appends. The outbox stands for "somewhere outside the run", so it
 * is never placed relative to a workspace (a tool could then read or rewrite its own record of
 * effects): an explicit option wins, then VEETBOT_OUTBOX_PATH, then ./.veetbot/outbox.log.
 * Always returned absolute, fixed when the tools are built.
 */
export function resolveOutboxPath(sources: OutboxPathSources = {}): string {
  const cwd = sources.cwd ?? process.cwd();
  const fromEnv = (sources.env ?? process.env)[OUTBOX_PATH_ENV];
  const chosen = sources.outboxPath ?? (fromEnv !== undefined && fromEnv !== '' ? fromEnv : DEFAULT_OUTBOX_RELATIVE_PATH);
  return path.resolve(cwd, chosen);
}
