import type { PolicyProfile } from './policy-profile';

/**
 * The shipped default profile (RULINGS.md "Policy"):
 * - skill.manage is denied when origin_trust is below USER (§ Skills: "an agent whose turn
 *   saw untrusted content cannot write a skill in that turn");
 * - HIGH-risk writes from an EXTERNAL_UNTRUSTED origin are denied;
 * - EXTERNAL_WRITE asks for approval when origin_trust is below USER;
 * - everything else is allowed (scopes were already checked at step 3).
 */
export const DEFAULT_POLICY_PROFILE: PolicyProfile = {
  id: 'default',
  rules: [
    {
      id: 'skill-manage-untrusted-origin',
      when: { tools: ['skill.manage'], origin_trust_below: 'user' },
      effect: 'deny',
      reason_code: 'policy.origin.untrusted',
    },
    {
      id: 'high-risk-write-untrusted-origin',
      when: { risks: ['high'], side_effects: ['workspace_write', 'external_write'], origin_trust_below: 'internal_tool' },
      effect: 'deny',
      reason_code: 'policy.rule.denied',
    },
    {
      id: 'external-write-needs-approval',
      when: { side_effects: ['external_write'], origin_trust_below: 'user' },
      effect: 'require_approval',
      reason_code: 'policy.matrix.external_write',
    },
  ],
  default: { effect: 'allow', reason_code: 'policy.rule.allowed' },
};
