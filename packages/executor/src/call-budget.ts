import type { Tool, ToolCallLimits } from '@veetbot/ports';
import type { ToolSpec } from '@veetbot/domain';
import type { RunContext } from './durable-deps';

/**
 * docs/adr/0025: a call "cannot finish" before the run deadline when the run leaves it less
 * than this many seconds. Below it a call does no useful work (a round trip, a handshake, a
 * watermark commit take that long on a loaded host) and would only end tool.timeout — or,
 * after a non-idempotent effect watermark, UNCERTAIN, which a human must then review.
 */
export const DEFAULT_MINIMUM_CALL_SECONDS = 1;

/** The time one call is given, decided before it starts. */
export type CallBudget =
  | {
      readonly kind: 'startable';
      /** § ToolExecutionContext.timeout_seconds: effective, never the declared value. */
      readonly timeoutSeconds: number;
      /** § ToolExecutionContext.deadline_at: already min'd with the run deadline. */
      readonly deadlineAt: Date;
    }
  /** The run deadline leaves too little time: refused before dispatch, run.deadline_exceeded (ADR 0020). */
  | { readonly kind: 'cannot_finish' };

/** What is left of the run, in seconds (negative once its deadline has passed). */
export function remainingRunSeconds(run: Pick<RunContext, 'deadlineAt'>, now: Date): number {
  return (run.deadlineAt.getTime() - now.getTime()) / 1000;
}

/**
 * Whether the run still leaves a call time to finish (docs/adr/0025). The runtime asks this at
 * each call's dispatch and the executor again as step 10 begins: one rule, one threshold.
 */
export function runLeavesTimeForCall(
  run: Pick<RunContext, 'deadlineAt'>,
  now: Date,
  minimumCallSeconds: number = DEFAULT_MINIMUM_CALL_SECONDS,
): boolean {
  return remainingRunSeconds(run, now) >= minimumCallSeconds;
}

/**
 * The effective timeout (§ ToolExecutionContext: "the executor does that once, in one place";
 * § MCP: "min(request_timeout, spec.timeout_seconds, remaining run budget) ... the effective
 * value that lands in ToolExecutionContext.timeout_seconds"): the minimum of the declared
 * timeout, the route's request timeout (an MCP server's, declared at registration), what is
 * left of the run, and the caller's own limit. Nothing downstream applies a limit of its own.
 */
export function effectiveTimeoutSeconds(
  spec: Pick<ToolSpec, 'timeout_seconds'>,
  limits: ToolCallLimits | undefined,
  now: Date,
  run: Pick<RunContext, 'deadlineAt' | 'callerTimeoutSeconds'>,
): number {
  return Math.min(
    spec.timeout_seconds,
    limits?.requestTimeoutSeconds ?? Number.POSITIVE_INFINITY,
    remainingRunSeconds(run, now),
    run.callerTimeoutSeconds ?? Number.POSITIVE_INFINITY,
  );
}

/** Step 10's first decision: refuse a call that cannot finish, or give it its one number. */
export function callBudget(
  tool: Pick<Tool, 'spec' | 'limits'>,
  now: Date,
  run: Pick<RunContext, 'deadlineAt' | 'callerTimeoutSeconds'>,
  minimumCallSeconds?: number,
): CallBudget {
  if (!runLeavesTimeForCall(run, now, minimumCallSeconds)) return { kind: 'cannot_finish' };
  const timeoutSeconds = effectiveTimeoutSeconds(tool.spec, tool.limits, now, run);
  return { kind: 'startable', timeoutSeconds, deadlineAt: new Date(now.getTime() + timeoutSeconds * 1000) };
}
