import { RunAborted } from './run-lease';
import type { RuntimeCore } from './runtime-core';

/** The key of core.sessionsAtWork. */
const sessionKey = (tenantId: string, sessionId: string): string => `${tenantId}\0${sessionId}`;

/**
 * Run `work` as work of the session in this process (a step, a recovery, a cancellation's
 * settling): while any is under way, teardown of another run of the same session leaves the
 * session's transports alone — an in-flight call holds its transport (§ MCP).
 */
export async function atWork<T>(core: RuntimeCore, tenantId: string, sessionId: string, work: () => Promise<T>): Promise<T> {
  const key = sessionKey(tenantId, sessionId);
  core.sessionsAtWork.set(key, (core.sessionsAtWork.get(key) ?? 0) + 1);
  try {
    return await work();
  } finally {
    const left = (core.sessionsAtWork.get(key) ?? 1) - 1;
    if (left > 0) core.sessionsAtWork.set(key, left);
    else core.sessionsAtWork.delete(key);
  }
}

/** The run's work was stopped because the run ended or was cancelled (not a lost lease). */
export function runEnded(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason instanceof RunAborted && signal.reason.why !== 'lease_lost';
}

/**
 * § MCP: "Run teardown releases its session's transports promptly, including suspension,
 * without discarding the pinned catalog or the once-per-session authentication ladder."
 * Called when a run ended (failed, cancelled) or suspended (a call waits for an approval or
 * for a user) in this process. The session's transports are released unless other work of the
 * same session is under way here (docs/adr/0024); other processes let go of theirs at their
 * next MCP sweep, which reads the session's runs. Best effort: a release that fails leaves the
 * transports to the idle sweep; it never fails the step or the cancellation.
 */
export async function tearDown(core: RuntimeCore, tenantId: string, sessionId: string): Promise<void> {
  const mcp = core.deps.mcp;
  if (mcp === undefined) return;
  if ((core.sessionsAtWork.get(sessionKey(tenantId, sessionId)) ?? 0) > 0) return;
  await mcp.releaseSession(sessionId).catch(() => undefined);
}
