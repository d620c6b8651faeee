import {
  canonicalJson,
  ConfigurationError,
  sha256Hex,
  isTrustBelow,
  type PolicyDecision,
  type Principal,
  type ProposedAction,
  type ToolSpec,
} from '@veetbot/domain';
import type { PolicyEngine } from '@veetbot/ports';
import { PolicyProfile, type PolicyConditions, type PolicyRule } from './policy-profile';
import { DEFAULT_POLICY_PROFILE } from './default-profile';

function matchesTool(patterns: readonly string[], name: string): boolean {
  return patterns.some((p) => (p.endsWith('.*') ? name.startsWith(p.slice(0, -1)) : p === name));
}

/** The conditions that depend only on the declaration, not on a particular call. */
function matchesSpecConditions(
  when: PolicyConditions,
  spec: Pick<ToolSpec, 'name' | 'kind' | 'source' | 'side_effect' | 'risk' | 'idempotency'>,
): boolean {
  if (when.tools && !matchesTool(when.tools, spec.name)) return false;
  if (when.kinds && !when.kinds.includes(spec.kind)) return false;
  if (when.sources && !when.sources.includes(spec.source)) return false;
  if (when.side_effects && !when.side_effects.includes(spec.side_effect)) return false;
  if (when.risks && !when.risks.includes(spec.risk)) return false;
  if (when.idempotency && !when.idempotency.includes(spec.idempotency)) return false;
  return true;
}

function isCallDependent(when: PolicyConditions): boolean {
  return when.origin_trust_below !== undefined || when.argument_trust_below !== undefined;
}

function matches(rule: PolicyRule, action: ProposedAction): boolean {
  const { when } = rule;
  const spec = {
    name: action.tool_name,
    kind: action.kind,
    source: action.source,
    side_effect: action.side_effect,
    risk: action.risk,
    idempotency: action.idempotency,
  };
  if (!matchesSpecConditions(when, spec)) return false;
  if (when.origin_trust_below && !isTrustBelow(action.origin_trust, when.origin_trust_below)) return false;
  if (when.argument_trust_below) {
    const below = when.argument_trust_below;
    if (!Object.values(action.argument_trust).some((t) => isTrustBelow(t, below))) return false;
  }
  return true;
}

/**
 * A profile's version: its id and the first 16 hex digits of the sha256 of its canonical JSON.
 * Any change to a rule, its order or the default is a new version, and the same profile gives
 * the same version in every process (an approval asked under one version is only honoured
 * under that version: docs/adr/0047).
 */
export function policyVersionOf(profile: PolicyProfile): string {
  return `${profile.id}@${sha256Hex(canonicalJson(profile)).slice(0, 16)}`;
}

/** RULINGS.md "Policy": the default PolicyEngine, driven by a validated profile. */
export class DefaultPolicyEngine implements PolicyEngine {
  readonly profile: PolicyProfile;
  /** What every decision carries as policy_version (policyVersionOf). */
  readonly version: string;

  constructor(profile: unknown = DEFAULT_POLICY_PROFILE) {
    const parsed = PolicyProfile.safeParse(profile);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ConfigurationError(
        'config.policy_profile_invalid',
        `Policy profile is invalid at ${issue?.path.join('.') ?? '(root)'}: ${issue?.message ?? 'unknown'}`,
      );
    }
    this.profile = parsed.data;
    this.version = policyVersionOf(this.profile);
  }

  evaluate(action: ProposedAction): PolicyDecision {
    for (const rule of this.profile.rules) {
      if (matches(rule, action))
        return { effect: rule.effect, reason_code: rule.reason_code, rule_id: rule.id, policy_version: this.version };
    }
    return {
      effect: this.profile.default.effect,
      reason_code: this.profile.default.reason_code,
      rule_id: `${this.profile.id}.default`,
      policy_version: this.version,
    };
  }

  offers(spec: ToolSpec, _principal: Principal): boolean {
    // Not offered only when every call would be denied: walking the rules in order, a
    // call-dependent rule that could allow (or ask) means some calls get through; a
    // call-dependent deny covers only some calls, so keep walking; the first rule that
    // matches the declaration unconditionally decides for all remaining calls.
    for (const rule of this.profile.rules) {
      if (!matchesSpecConditions(rule.when, spec)) continue;
      if (isCallDependent(rule.when)) {
        if (rule.effect !== 'deny') return true;
        continue;
      }
      return rule.effect !== 'deny';
    }
    return this.profile.default.effect !== 'deny';
  }
}
