import { z } from 'zod';
import { Principal, TrustLevel } from '@veetbot/domain';

/**
 * One model (or runtime) tool call entering the pipeline. `arguments` is whatever arrived:
 * step 4 decides whether it is a JSON object at all.
 */
export const ToolCallRequest = z
  .object({
    tenantId: z.string().min(1),
    principal: Principal,
    sessionId: z.string().min(1),
    runId: z.string().min(1),
    stepNumber: z.number().int().nonnegative(),
    // Provider call ids (call_…, toolu_…) and bridge ids (bridge:…): echoed into items and
    // events, so restricted to a safe alphabet rather than arbitrary model text.
    callId: z.string().regex(/^[A-Za-z0-9_.:-]{1,256}$/),
    toolName: z.string(),
    arguments: z.unknown(),
    /**
     * Who built the call. `model`: arguments are EXTERNAL_UNTRUSTED and origin_trust is the
     * minimum over `contextTrust`. `runtime`: the platform built it; PLATFORM (§ Schema
     * additions: "PLATFORM when not model-driven").
     */
    origin: z.enum(['model', 'runtime']),
    /** Trust labels of the context items present in the model request that produced the call. */
    contextTrust: z.array(TrustLevel),
    /** A caller may state a lower label per top-level argument, never a higher one (RULINGS.md 1). */
    argumentTrust: z.record(z.string(), TrustLevel).optional(),
    /** The approval decision when this call re-enters at step 6 after a human decided. */
    approval: z.enum(['approved', 'denied']).optional(),
  })
  .strict();
export type ToolCallRequest = z.infer<typeof ToolCallRequest>;
