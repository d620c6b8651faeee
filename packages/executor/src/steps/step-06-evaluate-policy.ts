import {
  isKnownReasonCode,
  minTrust,
  minimumTrust,
  type PolicyDecision,
  type Principal,
  type ProposedAction,
  type ToolSpec,
  type TrustLevel,
} from '@veetbot/domain';
import type { PolicyEngine } from '@veetbot/ports';
import type { ToolCallRequest } from '../tool-call-request';
import { concludeWithoutExecution, type Concluded } from '../render-item';

/**
 * § Where argument trust comes from (Decision 9, RULINGS.md 1): origin_trust is the minimum
 * label over the context items present in the request. A runtime-built call carries
 * PLATFORM. A model call that names no context items fails closed to EXTERNAL_UNTRUSTED.
 */
export function originTrustOf(request: Pick<ToolCallRequest, 'origin' | 'contextTrust'>): TrustLevel {
  return minimumTrust(request.contextTrust, request.origin === 'runtime' ? 'platform' : 'external_untrusted');
}

/**
 * argument_trust: EXTERNAL_UNTRUSTED for every model-produced argument, PLATFORM for a
 * runtime-built call; a caller's stated label can only lower it. Never inferred by
 * matching argument text (Decision 9).
 */
export function argumentTrustOf(
  request: Pick<ToolCallRequest, 'origin' | 'argumentTrust'>,
  args: Record<string, unknown>,
): Record<string, TrustLevel> {
  const base: TrustLevel = request.origin === 'runtime' ? 'platform' : 'external_untrusted';
  const out: Record<string, TrustLevel> = {};
  for (const key of Object.keys(args)) {
    const stated = request.argumentTrust?.[key];
    out[key] = stated === undefined ? base : minTrust(base, stated);
  }
  return out;
}

export function proposedAction(
  spec: ToolSpec,
  principal: Principal,
  argumentsHash: string,
  originTrust: TrustLevel,
  argumentTrust: Record<string, TrustLevel>,
): ProposedAction {
  return {
    tool_name: spec.name,
    tool_version: spec.version,
    kind: spec.kind,
    source: spec.source,
    server_id: spec.server_id,
    side_effect: spec.side_effect,
    risk: spec.risk,
    idempotency: spec.idempotency,
    required_scopes: [...spec.required_scopes],
    arguments_hash: argumentsHash,
    origin_trust: originTrust,
    argument_trust: argumentTrust,
    principal,
  };
}

/**
 * The code a policy deny ends with. § Advertisement is pinned, the availability table: for a
 * tool the session advertised, "Scope revoked, or policy now denies" is `denied,
 * policy.scope.missing`. "Policy now denies" is the pin's own policy filter turning: the profile
 * no longer offers the tool to this principal at all (`offers` is false — every call would be
 * denied, whatever its arguments or trust), so the advertisement is stale and the model reads the
 * same code as for a revoked scope. A deny that depends on this call (origin or argument trust)
 * is the ordinary policy matrix and keeps the rule's own code. Outside a session nothing was
 * advertised, so the rule's code stands too. docs/adr/0023.
 */
export function policyDenialCode(
  policy: PolicyEngine,
  spec: ToolSpec,
  action: ProposedAction,
  decision: PolicyDecision,
  advertised: boolean,
): string {
  if (advertised && !policy.offers(spec, action.principal)) return 'policy.scope.missing';
  // A profile may name a code the table lacks; the model still reads a fixed message.
  return isKnownReasonCode(decision.reason_code) ? decision.reason_code : 'policy.rule.denied';
}

/**
 * Step 6: one pure policy evaluation. A deny ends the call DENIED (policyDenialCode). Step 10's
 * pre-effect re-check evaluates through here too, so both answer a deny the same way.
 */
export function evaluatePolicy(
  policy: PolicyEngine,
  spec: ToolSpec,
  action: ProposedAction,
  advertised: boolean,
  callId: string,
): PolicyStep {
  const decision = policy.evaluate(action);
  if (decision.effect !== 'deny') return { ok: true, value: decision };
  // The refusal keeps the decision: its row records the policy version and rule (docs/adr/0047).
  return {
    ok: false,
    concluded: concludeWithoutExecution(callId, action.tool_name, policyDenialCode(policy, spec, action, decision, advertised), 'denied'),
    decision,
  };
}

/** Step 6's answer: proceed with the decision, or the denial with the decision that denied. */
export type PolicyStep =
  | { readonly ok: true; readonly value: PolicyDecision }
  | { readonly ok: false; readonly concluded: Concluded; readonly decision: PolicyDecision };
