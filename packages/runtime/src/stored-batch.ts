import { canonicalJson, StepBatch, type Principal, type SubmittedCall, type TrustLevel } from '@veetbot/domain';
import type { StepRow } from '@veetbot/ports';
import { RuntimeError } from './runtime-errors';
import { readStoredTraceContext, type StoredTraceContext } from './step-trace';

/**
 * What `steps.batch` holds: the submission, so a worker can run a step the api stored and the
 * recovery sweep can rebuild each call's request after the submitting worker died. It is
 * storage, so it keeps the specification's snake_case spelling (RULINGS.md); `version` makes a
 * future change a new shape rather than a silent misread. This module is the one place the
 * batch crosses between that form and the domain's StepBatch (docs/adr/0032).
 */
export interface StoredCall {
  readonly call_id: string;
  readonly tool_name: string;
  readonly arguments: unknown;
  readonly context_trust: readonly TrustLevel[];
  readonly argument_trust?: Readonly<Record<string, TrustLevel>>;
  readonly origin: 'model' | 'runtime';
}

export interface StoredStepBatch {
  readonly version: 1;
  readonly principal: Principal;
  readonly calls: readonly StoredCall[];
  readonly caller_timeout_seconds: number | null;
  /**
   * The W3C trace context of the api request that stored the step (docs/adr/0068): the
   * worker's `step.run` span continues that trace. Not part of the batch: a resubmission
   * compares calls only, and a value that does not read back is ignored, never unreadable.
   */
  readonly trace_context?: StoredTraceContext;
}

/** Stored key → domain key, for every key a stored call may hold. */
const CALL_KEYS: Readonly<Record<string, keyof SubmittedCall>> = {
  call_id: 'callId',
  tool_name: 'toolName',
  arguments: 'arguments',
  context_trust: 'contextTrust',
  argument_trust: 'argumentTrust',
  origin: 'origin',
};
const BATCH_KEYS = new Set(['version', 'principal', 'calls', 'caller_timeout_seconds', 'trace_context']);

export function toStoredBatch(batch: StepBatch, traceContext: StoredTraceContext | null = null): StoredStepBatch {
  return {
    version: 1,
    principal: batch.principal,
    calls: batch.calls.map((c) => ({
      call_id: c.callId,
      tool_name: c.toolName,
      // JSON has no `undefined`: the stored form must read back as what was submitted.
      arguments: c.arguments === undefined ? null : c.arguments,
      context_trust: [...c.contextTrust],
      ...(c.argumentTrust === undefined ? {} : { argument_trust: { ...c.argumentTrust } }),
      origin: c.origin ?? 'model',
    })),
    caller_timeout_seconds: batch.callerTimeoutSeconds ?? null,
    ...(traceContext === null ? {} : { trace_context: traceContext }),
  };
}

/** The trace context stored with a step (toStoredBatch's), or null: none, or not one the api wrote. */
export function storedTraceContext(stored: unknown): StoredTraceContext | null {
  return isRecord(stored) ? readStoredTraceContext(stored.trace_context) : null;
}

/** What reading `steps.batch` back found: the batch, or why the value is not one. */
export type StoredBatchRead = { readonly batch: StepBatch; readonly error?: undefined } | { readonly batch: null; readonly error: Error };

/**
 * The inverse of `toStoredBatch`: the batch a stored step came from, checked by the domain's one
 * schema (StepBatch) once its keys are renamed — or why the stored value is not a batch this
 * version wrote. A worker runs the step the api stored (ports/step-queue.ts) exactly as if it
 * had been submitted in-process, so both derive the same idempotency keys.
 */
export function fromStoredBatch(stored: unknown): StoredBatchRead {
  if (!isRecord(stored) || stored.version !== 1 || !('caller_timeout_seconds' in stored) || !Array.isArray(stored.calls))
    return unreadable('not a version 1 batch');
  const extra = Object.keys(stored).find((key) => !BATCH_KEYS.has(key));
  if (extra !== undefined) return unreadable(`unknown key ${JSON.stringify(extra)}`);
  const calls: Record<string, unknown>[] = [];
  for (const [index, call] of (stored.calls as unknown[]).entries()) {
    // Every call the store holds names its origin (toStoredBatch writes the default).
    if (!isRecord(call) || !('origin' in call)) return unreadable(`calls.${index} is not a stored call`);
    const renamed: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(call)) {
      const domainKey = CALL_KEYS[key];
      if (domainKey === undefined) return unreadable(`calls.${index} has the unknown key ${JSON.stringify(key)}`);
      renamed[domainKey] = value;
    }
    calls.push(renamed);
  }
  const timeout = stored.caller_timeout_seconds;
  const parsed = StepBatch.safeParse({
    principal: stored.principal,
    calls,
    ...(timeout === null ? {} : { callerTimeoutSeconds: timeout }),
  });
  return parsed.success ? { batch: parsed.data } : { batch: null, error: parsed.error };
}

function unreadable(why: string): StoredBatchRead {
  return { batch: null, error: new Error(`The stored batch is unreadable: ${why}.`) };
}

/**
 * The one resubmission check (docs/adr/0028), for the runtime's own insert and the api's alike:
 * UNIQUE(run_id, step_number) found a step under this number. The same calls again are a
 * resubmission, answered with the stored step (every call dedups to its recorded outcome); a
 * different batch is a client defect, refused (`runtime.step_conflict`, the api's 409
 * step.conflict) rather than silently mixed.
 */
export function checkResubmission(existing: StepRow, batch: StepBatch): StepRow {
  if (!storedCallsMatch(existing.batch, batch))
    throw new RuntimeError('runtime.step_conflict', 'This step number already holds a different batch.');
  return existing;
}

export function storedCallsMatch(stored: unknown, batch: StepBatch): boolean {
  if (fromStoredBatch(stored).batch === null) return false;
  const held = (stored as { calls: unknown }).calls;
  const sent = toStoredBatch(batch).calls;
  try {
    // Canonical form: the stored copy comes back from jsonb with its keys reordered.
    return canonicalJson(held) === canonicalJson(sent);
  } catch {
    // A value canonical JSON refuses (two keys equal under NFC; the pipeline will refuse the
    // call too): compare as sent.
    return JSON.stringify(held) === JSON.stringify(sent);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
