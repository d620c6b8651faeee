import { z } from 'zod';
import { IdempotencyClass, PolicyEffect, RiskLevel, SideEffectClass, ToolKind, ToolSource, TrustLevel } from '@veetbot/domain';

/**
 * RULINGS.md "Policy": profiles are data — validated configuration, not code. A rule matches
 * when every condition it states holds; the first matching rule decides; otherwise the
 * profile's default applies.
 */
export const PolicyConditions = z
  .object({
    /** Exact tool names or `domain.*` patterns. */
    tools: z
      .array(z.string().regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*(\.\*)?$/))
      .min(1)
      .optional(),
    kinds: z.array(ToolKind).min(1).optional(),
    sources: z.array(ToolSource).min(1).optional(),
    side_effects: z.array(SideEffectClass).min(1).optional(),
    risks: z.array(RiskLevel).min(1).optional(),
    idempotency: z.array(IdempotencyClass).min(1).optional(),
    /** Matches when origin_trust is strictly below this level. */
    origin_trust_below: TrustLevel.optional(),
    /** Matches when any argument's trust is strictly below this level. */
    argument_trust_below: TrustLevel.optional(),
  })
  .strict();
export type PolicyConditions = z.infer<typeof PolicyConditions>;

const PolicyReasonCode = z.string().regex(/^policy\.[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/);

export const PolicyRule = z
  .object({
    id: z
      .string()
      .regex(/^[a-z][a-z0-9_.-]*$/)
      .max(64),
    when: PolicyConditions,
    effect: PolicyEffect,
    /** For deny: the denial code. For require_approval: the code a refused approval ends with. */
    reason_code: PolicyReasonCode,
  })
  .strict();
export type PolicyRule = z.infer<typeof PolicyRule>;

export const PolicyProfile = z
  .object({
    id: z
      .string()
      .regex(/^[a-z][a-z0-9_.-]*$/)
      .max(64),
    rules: z.array(PolicyRule),
    default: z.object({ effect: PolicyEffect, reason_code: PolicyReasonCode }).strict(),
  })
  .strict()
  .superRefine((profile, ctx) => {
    const seen = new Set<string>();
    profile.rules.forEach((rule, i) => {
      if (seen.has(rule.id)) ctx.addIssue({ code: 'custom', path: ['rules', i, 'id'], message: 'duplicate rule id' });
      seen.add(rule.id);
    });
  });
export type PolicyProfile = z.infer<typeof PolicyProfile>;
