import { isReadOnlySideEffect } from './enums';
import { ConfigurationError } from './errors';
import type { ToolSpec } from './tool-spec';

/**
 * § Parallel calls, and what a step actually is — the admission check, over the batch as a
 * whole, before any call executes:
 *
 *   parallel_ok(batch) =
 *       len(batch) > 1
 *       and every spec.side_effect is read-only
 *       and every spec.allow_parallel
 *       and every spec.idempotency is READ_ONLY
 *       and no two calls share a workspace write path
 *       and batch fits the remaining tool and time budget
 *
 * If any condition fails the whole batch runs sequentially in the order the provider emitted
 * it. There is no partial parallelism.
 *
 * tool.call (§ Control tools): "the parallel-batch check unwraps the same way, so a batch's
 * parallelism is decided by the tools it actually runs". Unwrapping needs the run's pinned set,
 * which this pure module does not have, so callers pass the UNWRAPPED specs and arguments — the
 * same unwrapping the pipeline does before step 1 (executor/src/steps/step-00-unwrap-tool-call.ts;
 * the runtime reads it from the pipeline's dry run, runtime/src/batch-plan.ts), so the two can
 * never disagree. A call
 * still carrying the tool.call spec is one that could not be unwrapped (a malformed wrapper or a
 * name the run does not offer); its real effect is unknown, so the batch runs sequentially
 * (`unresolved_tool_call`).
 */

export const TOOL_CALL_NAME = 'tool.call';
/** § The admission check: concurrency within a batch is capped by configuration, default 8. */
export const DEFAULT_BATCH_CONCURRENCY = 8;

export type BatchSpec = Pick<ToolSpec, 'name' | 'side_effect' | 'allow_parallel' | 'idempotency' | 'timeout_seconds'>;

export interface BatchCall {
  /** The spec of the tool the call actually runs (tool.call already unwrapped). */
  readonly spec: BatchSpec;
  readonly arguments: Readonly<Record<string, unknown>>;
}

export interface BatchBudget {
  /** Tool calls the run may still make (Infinity when unbounded). */
  readonly remainingToolCalls: number;
  /** Seconds until the run deadline (Infinity when none). */
  readonly remainingSeconds: number;
}

/** In the order the conditions are listed; `reason` is the first that failed. */
export const SEQUENTIAL_REASONS = [
  'single_call',
  'unresolved_tool_call',
  'not_read_only',
  'not_allow_parallel',
  'not_read_only_idempotency',
  'shared_write_path',
  'over_budget',
] as const;
export type SequentialReason = (typeof SEQUENTIAL_REASONS)[number];

export type BatchAdmission =
  | { readonly mode: 'parallel' }
  | {
      readonly mode: 'sequential';
      /** The first condition that failed. */
      readonly reason: SequentialReason;
      /** Every condition that failed (for the span and the operator; the mode is the same). */
      readonly reasons: readonly SequentialReason[];
    };

/** POSIX-style normalization of a workspace-relative path: no empty, "." or ".." segments. */
export function normalizeWorkspacePath(path: string): string {
  const out: string[] = [];
  for (const segment of path.normalize('NFC').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return out.join('/');
}

/** Equal, or one contains the other (writing a folder and a file inside it share a path). */
function overlaps(a: string, b: string): boolean {
  return a === b || a === '' || b === '' || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

export interface SharedWritePath {
  /** Indices of the two calls, in batch order. */
  readonly first: number;
  readonly second: number;
  /** null when one of the two declares no path, so its write set is unknown. */
  readonly path: string | null;
}

/**
 * "No two calls share a workspace write path": the `path` argument of every WORKSPACE_WRITE
 * call. A write without a string `path` could write anywhere, so it conflicts with any other
 * write; the check is conservative because a wrong "parallel" costs correctness and a wrong
 * "sequential" costs only latency.
 */
export function findSharedWritePath(calls: readonly BatchCall[]): SharedWritePath | null {
  const writes: Array<{ index: number; path: string | null }> = [];
  calls.forEach((call, index) => {
    if (call.spec.side_effect !== 'workspace_write') return;
    const path = call.arguments.path;
    writes.push({ index, path: typeof path === 'string' ? normalizeWorkspacePath(path) : null });
  });
  for (let i = 0; i < writes.length; i++) {
    for (let j = i + 1; j < writes.length; j++) {
      const a = writes[i]!;
      const b = writes[j]!;
      if (a.path === null || b.path === null) return { first: a.index, second: b.index, path: null };
      if (overlaps(a.path, b.path)) return { first: a.index, second: b.index, path: a.path.length <= b.path.length ? a.path : b.path };
    }
  }
  return null;
}

export function admitBatch(calls: readonly BatchCall[], budget: BatchBudget): BatchAdmission {
  const reasons: SequentialReason[] = [];
  if (calls.length <= 1) reasons.push('single_call');
  if (calls.some((c) => c.spec.name === TOOL_CALL_NAME)) reasons.push('unresolved_tool_call');
  if (!calls.every((c) => isReadOnlySideEffect(c.spec.side_effect))) reasons.push('not_read_only');
  if (!calls.every((c) => c.spec.allow_parallel)) reasons.push('not_allow_parallel');
  if (!calls.every((c) => c.spec.idempotency === 'read_only')) reasons.push('not_read_only_idempotency');
  if (findSharedWritePath(calls) !== null) reasons.push('shared_write_path');
  const longest = calls.reduce((max, c) => Math.max(max, c.spec.timeout_seconds), 0);
  if (calls.length > budget.remainingToolCalls || longest > budget.remainingSeconds) reasons.push('over_budget');
  const [reason] = reasons;
  return reason === undefined ? { mode: 'parallel' } : { mode: 'sequential', reason, reasons };
}

export type Settled<T> = PromiseSettledResult<T>;

/**
 * Run thunks with at most `cap` in flight; the rest queue (exceeding the cap queues, never
 * fails). Results keep the tasks' order. A rejection — or a thunk that throws synchronously —
 * does not cancel its siblings: they are read-only, and letting them finish yields more
 * evidence for the next model call than cancelling them would.
 */
export async function runWithConcurrencyCap<T>(
  tasks: ReadonlyArray<() => Promise<T> | T>,
  cap: number = DEFAULT_BATCH_CONCURRENCY,
): Promise<Settled<T>[]> {
  if (!Number.isSafeInteger(cap) || cap < 1) {
    throw new ConfigurationError('config.batch_concurrency_invalid', 'The batch concurrency cap must be a positive integer.');
  }
  const results = new Array<Settled<T>>(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const index = next++;
      try {
        results[index] = { status: 'fulfilled', value: await tasks[index]!() };
      } catch (reason) {
        results[index] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(cap, tasks.length) }, worker));
  return results;
}
