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
