import { z } from 'zod';
import { IdempotencyClass, RiskLevel, SideEffectClass, ToolKind, ToolSource } from './enums';
import { TrustLevel } from './trust';
import { Principal } from './principal';

/** What policy evaluates at step 6: the declared action, never a synthetic one (§ Resolution). */
export const ProposedAction = z
  .object({
    tool_name: z.string(),
    tool_version: z.string(),
    kind: ToolKind,
    source: ToolSource,
    server_id: z.string().nullable(),
    side_effect: SideEffectClass,
    risk: RiskLevel,
    idempotency: IdempotencyClass,
    required_scopes: z.array(z.string()),
    arguments_hash: z.string(),
    origin_trust: TrustLevel,
    /** Per top-level argument; EXTERNAL_UNTRUSTED unless stated lower-or-equal by the caller (RULINGS.md 1). */
    argument_trust: z.record(z.string(), TrustLevel),
    principal: Principal,
  })
  .strict();
export type ProposedAction = z.infer<typeof ProposedAction>;

export const PolicyEffect = z.enum(['allow', 'require_approval', 'deny']);
export type PolicyEffect = z.infer<typeof PolicyEffect>;

export const PolicyDecision = z
  .object({
    effect: PolicyEffect,
    /** Stable code; for require_approval, the code a refused approval ends with. */
    reason_code: z.string(),
    /** Which rule decided: for the audit row, never for the model. */
    rule_id: z.string(),
    /**
     * The version of the policy that decided (the profile's content hash): recorded on the
     * invocation and approval rows, and an approval binds to it (docs/adr/0047).
     */
    policy_version: z.string(),
  })
  .strict();
export type PolicyDecision = z.infer<typeof PolicyDecision>;
