import { hasScope, type Principal, type ToolSpec } from '@veetbot/domain';
import { concludeWithoutExecution, type Concluded } from '../render-item';

/**
 * Step 3: the principal must hold every required scope, checked at call time even though
 * the pin already filtered on scopes — a scope revoked mid-session is denied here
 * (§ Advertisement is pinned: "Scope revoked … denied, policy.scope.missing").
 */
export function checkScopes(principal: Principal, spec: ToolSpec, callId: string): Concluded | null {
  if (spec.required_scopes.every((scope) => hasScope(principal, scope))) return null;
  return concludeWithoutExecution(callId, spec.name, 'policy.scope.missing', 'denied');
}
