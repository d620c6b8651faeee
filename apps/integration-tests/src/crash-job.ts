import { z } from 'zod';
import { Principal, TrustLevel } from '@veetbot/domain';

/**
 * What the test process tells a crash child (src/crash-child.ts) to do, and what the child says
 * back: JSON in, JSON lines out. The schemas are the trust boundary between the two processes:
 * a malformed setup or job is a child that refuses to start, never one that guesses.
 *
 * Two parts, so a child can be started (and composed, and connected) before its case exists:
 * the setup — the database and folders every child of a test file shares — and the job — one
 * step submission and where to die.
 */

/** Where inside the tool (step 10, after the watermark) something happens. */
export const EffectPoint = z.enum(['before_effect', 'after_effect']);
export type EffectPoint = z.infer<typeof EffectPoint>;

export const ChildSetup = z
  .object({
    /** The test's own PostgreSQL database. */
    databaseUrl: z.string().min(1),
    /** The run lease's TTL: short, so a dead or paused child's lease expires quickly. */
    leaseTtlMs: z.number().int().min(3),
    folders: z.object({ outbox: z.string().min(1), blobs: z.string().min(1), workspaces: z.string().min(1) }).strict(),
  })
  .strict();
export type ChildSetup = z.infer<typeof ChildSetup>;

export const CrashJob = z
  .object({
    /** The step, exactly as the API would submit it. */
    submission: z
      .object({
        tenantId: z.string().min(1),
        runId: z.string().min(1),
        stepNumber: z.number().int().nonnegative(),
        principal: Principal,
        calls: z
          .array(z.object({ callId: z.string(), toolName: z.string(), arguments: z.unknown(), contextTrust: z.array(TrustLevel) }).strict())
          .min(1),
      })
      .strict(),
    /** SIGKILL this process as this pipeline step begins (hooks.onStep). */
    dieAtStep: z.number().int().min(1).max(14).nullable(),
    /** Inside the tool: die (SIGKILL) there, or announce `in_tool` and wait for a `resume` line on stdin. */
    inTool: z
      .object({ point: EffectPoint, action: z.enum(['die', 'wait']) })
      .strict()
      .nullable(),
    /** After `armed`, wait for a `go` line on stdin before submitting (a barrier shared by several children). */
    barrier: z.boolean(),
  })
  .strict();
export type CrashJob = z.infer<typeof CrashJob>;

/** Setup and job in one document: `node --import tsx src/crash-child.ts '<json>'`. */
export const FullCrashJob = ChildSetup.extend(CrashJob.shape).strict();
export type FullCrashJob = z.infer<typeof FullCrashJob>;

/** The environment variables a child reads its setup (or whole job) from. */
export const CHILD_SETUP_ENV = 'VEETBOT_CRASH_SETUP';
export const CHILD_JOB_ENV = 'VEETBOT_CRASH_JOB';

/** The lines a child writes to stdout, one JSON object each. */
export type ChildMessage =
  /** Modules loaded. */
  | { readonly event: 'loaded'; readonly pid: number; readonly uptimeMs: number }
  /**
   * Composed and connected, waiting for its job. `owner` is its lease owner id (unique per
   * process); `applicationName` tags its connections in pg_stat_activity.
   */
  | { readonly event: 'ready'; readonly pid: number; readonly owner: string; readonly applicationName: string; readonly uptimeMs: number }
  /** The job arrived; at the barrier when it has one. */
  | { readonly event: 'armed' }
  /** Inside the tool at `point`, waiting for `resume`. */
  | { readonly event: 'in_tool'; readonly point: EffectPoint }
  /** submitStep answered. */
  | { readonly event: 'outcome'; readonly outcome: unknown; readonly stepsReached: number[] }
  /** submitStep threw: a typed error's name and code (FencingError: store.fenced; run busy: runtime.run_busy). */
  | {
      readonly event: 'error';
      readonly name: string;
      readonly code: string | null;
      readonly message: string;
      readonly stepsReached: number[];
    };
