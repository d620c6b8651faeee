import { z } from 'zod';

/**
 * Why a run is `failed`, as the run row and GET /v1/runs/{id} say it (docs/adr/0020). Each is
 * a reason code of the table (reason-codes.ts), so each has its one fixed message:
 * - tool.loop_detected: the identical-call breaker, or a tool call in the synthesis-only turn
 *   (§ The circuit breakers; ADR-0136);
 * - policy.breaker.repeated_denial: three identical denied proposals (ToolPolicyDenied);
 * - run.deadline_exceeded: a step after the run's deadline.
 */
export const RunFailureReason = z.enum(['tool.loop_detected', 'policy.breaker.repeated_denial', 'run.deadline_exceeded']);
export type RunFailureReason = z.infer<typeof RunFailureReason>;
