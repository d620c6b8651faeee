import { z } from 'zod';

/**
 * "Browser operation diagnostics (ADR-0158)": a versioned summary on a builtin browser tool's
 * terminal event, collected by trusted execution (the provider's host code) and never by a page
 * or a tool's output. Only closed enums, bounded timings and a truncation flag (docs/adr/0079):
 * no URL, no title, no page text, no free-form string a page could fill.
 */
export const BROWSER_DIAGNOSTICS_VERSION = 1;

/** Where in the operation it ended. */
export const BrowserPhase = z.enum(['validate', 'launch', 'navigate', 'snapshot', 'act', 'screenshot', 'close']);
export type BrowserPhase = z.infer<typeof BrowserPhase>;

export const BrowserOutcome = z.enum(['succeeded', 'failed', 'refused', 'timed_out']);
export type BrowserOutcome = z.infer<typeof BrowserOutcome>;

/** Why it did not succeed; `none` when it did. */
export const BrowserFailure = z.enum([
  'none',
  'url_refused',
  'destination_refused',
  'navigation_timeout',
  'navigation_failed',
  'no_session',
  'element_not_found',
  'element_not_actionable',
  'action_timeout',
  'left_allowed_schemes',
  'launch_failed',
  'capacity_exhausted',
  'browser_closed',
  'cancelled',
  'internal',
]);
export type BrowserFailure = z.infer<typeof BrowserFailure>;

/** Where the browser ran: inside the sandbox's namespaces, or nowhere (refused before launch). */
export const BrowserPlacement = z.enum(['isolated_sandbox', 'not_started']);
export type BrowserPlacement = z.infer<typeof BrowserPlacement>;

/** A timing is whole milliseconds, clamped to ten minutes: a number, never a page's value. */
export const BROWSER_TIMING_MAX_MS = 600_000;
const Timing = z.number().int().min(0).max(BROWSER_TIMING_MAX_MS);

export const BrowserDiagnostics = z
  .object({
    version: z.literal(BROWSER_DIAGNOSTICS_VERSION),
    phase: BrowserPhase,
    outcome: BrowserOutcome,
    failure: BrowserFailure,
    placement: BrowserPlacement,
    timings: z.object({ total_ms: Timing, launch_ms: Timing, navigation_ms: Timing }).strict(),
    /** The snapshot or the list of blocked requests was cut to its bound. */
    truncated: z.boolean(),
  })
  .strict();
export type BrowserDiagnostics = z.infer<typeof BrowserDiagnostics>;

/** Milliseconds as a bounded timing: rounded, never negative, never above the ceiling. */
export function boundedTiming(ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0) return 0;
  return Math.min(BROWSER_TIMING_MAX_MS, Math.round(ms));
}
