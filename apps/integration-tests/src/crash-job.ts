import { z } from 'zod';
import { Principal, TrustLevel } from '@veetbot/domain';

/**
 * What the test process tells a crash child (src/crash-child.ts) to do, and what the child says
 * back: one JSON job in, JSON lines out. The schema is the trust boundary between the two
 * processes: a malformed job is a child that refuses to start, never one that guesses.
 */

/** Where inside the tool (step 10, after the watermark) something happens. */
export const EffectPoint = z.enum(['before_effect', 'after_effect']);
export type EffectPoint = z.infer<typeof EffectPoint>;

export const CrashJob = z
  .object({
    /** The test's own PostgreSQL database. */
    databaseUrl: z.string().min(1),
    /** Tags the child's connections (pg_stat_activity.application_name), so the test can see when it is idle. */
    applicationName: z.string().min(1).max(63),
    /** This process's lease owner id: unique per process. */
    owner: z.string().min(1),
    /** The run lease's TTL: short, so a dead or paused child's lease expires quickly. */
    leaseTtlMs: z.number().int().min(3),
    folders: z.object({ outbox: z.string().min(1), blobs: z.string().min(1), workspaces: z.string().min(1) }).strict(),
    /** The step, exactly as the API would submit it. */
    submission: z
      .object({
        tenantId: z.string().min(1),
        runId: z.string().min(1),
        stepNumber: z.number().int().nonnegative(),
        principal: Principal,
        calls: z.array(z.object({ callId: z.string(), toolName: z.string(), arguments: z.unknown(), contextTrust: z.array(TrustLevel) }).strict()).min(1),
      })
      .strict(),
    /** SIGKILL this process as this pipeline step begins (hooks.onStep). */
    dieAtStep: z.number().int().min(1).max(14).nullable(),
    /** Inside the tool: die (SIGKILL) there, or announce `in_tool` and wait for a `resume` line on stdin. */
    inTool: z.object({ point: EffectPoint, action: z.enum(['die', 'wait']) }).strict().nullable(),
    /** After `ready`, wait for a `go` line on stdin before submitting (a barrier shared by several children). */
    barrier: z.boolean(),
  })
  .strict();
export type CrashJob = z.infer<typeof CrashJob>;

/** The lines a child writes to stdout, one JSON object each. */
export type ChildMessage =
  /** Modules loaded, waiting for a job (a warm child). */
  | { readonly event: 'loaded'; readonly pid: number; readonly uptimeMs: number }
  /** Composed and connected; at the barrier when the job has one. */
  | { readonly event: 'ready'; readonly pid: number; readonly uptimeMs: number }
  /** Inside the tool at `point`, waiting for `resume`. */
  | { readonly event: 'in_tool'; readonly point: EffectPoint }
  /** submitStep answered. */
  | { readonly event: 'outcome'; readonly outcome: unknown; readonly stepsReached: number[] }
  /** submitStep threw: a typed error's name and code (FencingError: store.fenced; run busy: runtime.run_busy). */
  | { readonly event: 'error'; readonly name: string; readonly code: string | null; readonly message: string; readonly stepsReached: number[] };
