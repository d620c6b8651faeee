import { z } from 'zod';

/**
 * RULINGS.md "Vocabulary": TrustLevel, highest first. "Minimum", "lower" and "below"
 * use this order.
 */
export const TRUST_ORDER = ['platform', 'trusted_configuration', 'user', 'internal_tool', 'external_untrusted'] as const;

export const TrustLevel = z.enum(TRUST_ORDER);
export type TrustLevel = z.infer<typeof TrustLevel>;

/** Rank: larger is more trusted. */
export function trustRank(level: TrustLevel): number {
  return TRUST_ORDER.length - 1 - TRUST_ORDER.indexOf(level);
}

export function isTrustBelow(a: TrustLevel, b: TrustLevel): boolean {
  return trustRank(a) < trustRank(b);
}

/** The lower of two labels. */
export function minTrust(a: TrustLevel, b: TrustLevel): TrustLevel {
  return trustRank(a) <= trustRank(b) ? a : b;
}

/**
 * origin_trust is the minimum label over the context items present in the model request
 * (§ Where argument trust comes from; Decision 9). With no context items, the call was not
 * model-driven by anything we can see, and `fallback` (the caller's own origin) stands.
 */
export function minimumTrust(levels: Iterable<TrustLevel>, fallback: TrustLevel): TrustLevel {
  let result: TrustLevel | undefined;
  for (const level of levels) result = result === undefined ? level : minTrust(result, level);
  return result ?? fallback;
}

/**
 * § ToolResult: output_trust may only lower the declared trust; the executor clamps rather
 * than trusting the tool to have behaved.
 */
export function clampTrust(declared: TrustLevel, claimed: TrustLevel | null | undefined): TrustLevel {
  if (claimed === null || claimed === undefined) return declared;
  return minTrust(declared, claimed);
}

/**
 * RULINGS.md 1: a caller of the API or the MCP gateway "may state a lower label, never a higher
 * one than its origin allows". A caller's origin is a person or a model outside the platform, so
 * the most it may state is USER: PLATFORM is the runtime's own and TRUSTED_CONFIGURATION the
 * operator's (docs/adr/0051). The CLI's dry run is the operator's and is not a caller.
 */
export const CALLER_TRUST_CEILING: TrustLevel = 'user';

/** A caller's statement above CALLER_TRUST_CEILING: where it is (a path under the statement) and what it said. */
export interface CallerTrustClaim {
  readonly path: readonly (string | number)[];
  readonly label: TrustLevel;
}

/**
 * The one check of what a caller states (docs/adr/0051): the first label above the ceiling in
 * `context_trust` (a list) and `argument_trust` (per field), or null when every label is one a
 * caller may state. Each face refuses what this finds, loudly: the REST api with 400
 * `request.trust_not_allowed`, the MCP gateway with JSON-RPC -32602 — never a silent clamp.
 */
export function callerTrustClaim(stated: {
  readonly context_trust?: readonly TrustLevel[] | undefined;
  readonly argument_trust?: Readonly<Record<string, TrustLevel>> | undefined;
}): CallerTrustClaim | null {
  for (const [index, label] of (stated.context_trust ?? []).entries()) {
    if (isTrustBelow(CALLER_TRUST_CEILING, label)) return { path: ['context_trust', index], label };
  }
  for (const [field, label] of Object.entries(stated.argument_trust ?? {})) {
    if (isTrustBelow(CALLER_TRUST_CEILING, label)) return { path: ['argument_trust', field], label };
  }
  return null;
}

/** What a refusal of a caller's claim says (the same words on every face). */
export function callerTrustMessage(claim: CallerTrustClaim): string {
  return `a caller may state at most ${CALLER_TRUST_CEILING} trust, not ${claim.label} (platform is the runtime's, trusted_configuration the operator's)`;
}
