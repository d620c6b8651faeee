import { z } from 'zod';
import { Principal } from './principal';
import { TrustLevel } from './trust';

/**
 * One call of a model step's batch, in the domain's spelling (§ Parallel calls, and what a step
 * actually is). The wire (`call_id`, …) and the stored form (`steps.batch`) keep the
 * specification's snake_case; each crosses into this type once, at its edge (docs/adr/0032).
 */
export const SubmittedCall = z
  .object({
    /** The provider's call id: unique within the step (§ Parallel calls: it separates the keys). */
    callId: z.string().min(1).max(256),
    toolName: z.string(),
    arguments: z.unknown(),
    /** Trust labels of the context items in the model request that produced the call. */
    contextTrust: z.array(TrustLevel),
    /** A caller may state a lower label per top-level argument, never a higher one. */
    argumentTrust: z.record(z.string(), TrustLevel).optional(),
    /** Default `model`. */
    origin: z.enum(['model', 'runtime']).optional(),
  })
  .strict();
export type SubmittedCall = z.infer<typeof SubmittedCall>;

/**
 * One model step's batch (ARCHITECTURE.md "A call's path", 1): the principal and the calls in
 * provider order — what `steps.batch` stores under its (run, step number). The one schema a
 * batch is checked by, whoever submits it: the api's request (converted from the wire), a
 * worker's stored step (converted from storage), an in-process caller of Runtime.submitStep.
 */
export const StepBatch = z
  .object({
    principal: Principal,
    calls: z.array(SubmittedCall).min(1),
    callerTimeoutSeconds: z.number().positive().optional(),
  })
  .strict();
export type StepBatch = Readonly<Omit<z.infer<typeof StepBatch>, 'calls'>> & { readonly calls: readonly SubmittedCall[] };

/** A batch with the step it belongs to: what Runtime.submitStep runs. */
export const StepSubmission = z
  .object({
    tenantId: z.string().min(1),
    runId: z.string().min(1),
    stepNumber: z.number().int().nonnegative(),
    ...StepBatch.shape,
  })
  .strict();
export type StepSubmission = Readonly<Omit<z.infer<typeof StepSubmission>, 'calls'>> & { readonly calls: readonly SubmittedCall[] };
