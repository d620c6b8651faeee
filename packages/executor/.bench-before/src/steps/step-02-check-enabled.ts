import type { ToolSpec } from '@veetbot/domain';
import type { AgentSpec, PinnedToolSet } from '@veetbot/ports';
import { concludeWithoutExecution, type Concluded } from '../render-item';
import { pinnedSpecOf } from './step-01-resolve-tool';

function agentEnables(agent: AgentSpec, name: string): boolean {
  if (agent.enabledTools === undefined) return true;
  return agent.enabledTools.some((p) => (p.endsWith('.*') ? name.startsWith(p.slice(0, -1)) : p === name));
}

/**
 * Step 2: the tool must be enabled for this agent and, in a session, be in the pinned set
 * the session advertised (§ Advertisement is pinned).
 */
export function checkEnabled(agent: AgentSpec, pinned: PinnedToolSet | null, spec: ToolSpec, callId: string): Concluded | null {
  const inPin = pinned === null || pinnedSpecOf(pinned, spec.name) !== undefined;
  if (inPin && agentEnables(agent, spec.name)) return null;
  return concludeWithoutExecution(callId, spec.name, 'policy.tool.not_enabled', 'denied');
}
