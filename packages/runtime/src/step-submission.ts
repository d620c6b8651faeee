import { z } from 'zod';
import { canonicalJson, Principal, TrustLevel, type ToolResultItem } from '@veetbot/domain';
import type { StepRow } from '@veetbot/ports';
import { RuntimeError } from './runtime-errors';

/** One model step's batch, as the agent loop submits it (ARCHITECTURE.md "A call's path", 1). */
export interface StepSubmission {
  readonly tenantId: string;
  readonly runId: string;
  readonly stepNumber: number;
  readonly principal: Principal;
  readonly calls: readonly SubmittedCall[];
  readonly callerTimeoutSeconds?: number;
}

export interface SubmittedCall {
  /** The provider's call id: unique within the step (§ Parallel calls: it separates the keys). */
  callId: string;
  toolName: string;
  arguments: unknown;
  /** Trust labels of the context items in the model request that produced the call. */
  contextTrust: TrustLevel[];
  /** A caller may state a lower label per top-level argument, never a higher one. */
  argumentTrust?: Record<string, TrustLevel>;
  /** Default `model`. */
  origin?: 'model' | 'runtime';
}

export interface StepOutcome {
  readonly stepNumber: number;
  /**
   * One per call that concluded, in submission order. A call waiting for approval has no
   * outcome yet: it is listed in `pendingApprovals` instead and gets its item when the step is
   * resubmitted after the decision (§ Parallel calls: the step ends only when every call has
   * a terminal row).
   */
  readonly items: readonly ToolResultItem[];
  readonly pendingApprovals: readonly { callId: string; invocationId: string }[];
  readonly mode: 'parallel' | 'sequential';
  /** ADR-0136: the next model turn is synthesis-only (answer from retained evidence). */
  readonly synthesisOnly: boolean;
  /** The breaker or the deadline stopped the run: it is now `failed` (docs/adr/0020). */
  readonly runFailed: 'tool_policy_denied' | 'tool_loop_detected' | 'deadline_exceeded' | null;
}

/**
 * What `steps.batch` holds: the submission, so the recovery sweep can rebuild each call's
 * request after the submitting worker died. Stored on disk, so the wire spelling is snake_case;
 * `version` makes a future change a new shape rather than a silent misread.
 */
export const StoredCall = z
  .object({
    call_id: z.string().min(1).max(256),
    tool_name: z.string(),
    arguments: z.unknown(),
    context_trust: z.array(TrustLevel),
    argument_trust: z.record(z.string(), TrustLevel).optional(),
    origin: z.enum(['model', 'runtime']),
  })
  .strict();
export type StoredCall = z.infer<typeof StoredCall>;

export const StoredStepBatch = z
  .object({
    version: z.literal(1),
    principal: Principal,
    calls: z.array(StoredCall).min(1),
    caller_timeout_seconds: z.number().positive().nullable(),
  })
  .strict();
export type StoredStepBatch = z.infer<typeof StoredStepBatch>;

export function toStoredBatch(submission: StepSubmission): StoredStepBatch {
  return {
    version: 1,
    principal: submission.principal,
    calls: submission.calls.map((c) => ({
      call_id: c.callId,
      tool_name: c.toolName,
      // JSON has no `undefined`: the stored form must read back as what was submitted.
      arguments: c.arguments === undefined ? null : c.arguments,
      context_trust: [...c.contextTrust],
      ...(c.argumentTrust === undefined ? {} : { argument_trust: { ...c.argumentTrust } }),
      origin: c.origin ?? 'model',
    })),
    caller_timeout_seconds: submission.callerTimeoutSeconds ?? null,
  };
}

/**
 * The inverse of `toStoredBatch`: the submission a stored batch came from. A worker rebuilds
 * the step the api stored as `pending` (ports/step-queue.ts) and runs it exactly as if it had
 * been submitted in-process, so both derive the same idempotency keys.
 */
export function fromStoredBatch(step: { readonly tenantId: string; readonly runId: string; readonly stepNumber: number }, stored: StoredStepBatch): StepSubmission {
  return {
    tenantId: step.tenantId,
    runId: step.runId,
    stepNumber: step.stepNumber,
    principal: stored.principal,
    calls: stored.calls.map((c) => ({
      callId: c.call_id,
      toolName: c.tool_name,
      arguments: c.arguments,
      contextTrust: [...c.context_trust],
      ...(c.argument_trust === undefined ? {} : { argumentTrust: { ...c.argument_trust } }),
      origin: c.origin,
    })),
    ...(stored.caller_timeout_seconds === null ? {} : { callerTimeoutSeconds: stored.caller_timeout_seconds }),
  };
}

/**
 * The one resubmission check (docs/adr/0028), for the runtime's own insert and the api's alike:
 * UNIQUE(run_id, step_number) found a step under this number. The same calls again are a
 * resubmission, answered with the stored step (every call dedups to its recorded outcome); a
 * different batch is a client defect, refused (`runtime.step_conflict`, the api's 409
 * step.conflict) rather than silently mixed.
 */
export function checkResubmission(existing: StepRow, submitted: StoredStepBatch): StepRow {
  const parsed = StoredStepBatch.safeParse(existing.batch);
  if (!parsed.success || !sameJson(parsed.data.calls, submitted.calls)) {
    throw new RuntimeError('runtime.step_conflict', 'This step number already holds a different batch.');
  }
  return existing;
}

function sameJson(a: unknown, b: unknown): boolean {
  try {
    // Canonical form: the stored copy comes back from jsonb with its keys reordered.
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    // A value canonical JSON refuses (two keys equal under NFC; the pipeline will refuse the
    // call too): compare as sent.
    return JSON.stringify(a) === JSON.stringify(b);
  }
}
