import { canonicalJson, missingScopes, sha256Hex, type Principal, type ToolSpec } from '@veetbot/domain';
import type { AgentSpec, PinnedToolSet, PolicyEngine, RuntimeEnvironment } from '@veetbot/ports';
import { toolEnabledByFlags } from './flags';

/** `enabledTools` entries: an exact name, or a prefix ending in `.*` (`web.*`, `mcp.acme.*`). */
export function agentEnables(agent: AgentSpec, name: string): boolean {
  if (agent.enabledTools === undefined) return true;
  return agent.enabledTools.some((entry) => (entry.endsWith('.*') ? name.startsWith(entry.slice(0, -1)) : entry === name));
}

/** The environment filter: the runtime can route the target, the gate is on, the server is in. */
export function environmentOffers(environment: RuntimeEnvironment, spec: ToolSpec): boolean {
  if (!environment.targetKinds.includes(spec.target_kind)) return false;
  if (!toolEnabledByFlags(spec.name, environment.flags)) return false;
  if (spec.source === 'mcp' && environment.mcpServers !== undefined) {
    return spec.server_id !== null && environment.mcpServers.includes(spec.server_id);
  }
  return true;
}

/**
 * § Resolution: Section 11.1's four filters, applied once, over the latest version of each
 * registered name: agent configuration, principal authorization (every required scope held),
 * policy profile (`offers`), runtime environment. Deprecated tools are not newly advertised;
 * they stay callable by name and version, and sets pinned before the deprecation keep them.
 */
export function selectSpecs(
  latest: Iterable<ToolSpec>,
  agent: AgentSpec,
  principal: Principal,
  policy: PolicyEngine,
  environment: RuntimeEnvironment,
): ToolSpec[] {
  const selected: ToolSpec[] = [];
  for (const spec of latest) {
    if (spec.deprecated) continue;
    if (!agentEnables(agent, spec.name)) continue;
    if (missingScopes(principal, spec.required_scopes).length > 0) continue;
    if (!environmentOffers(environment, spec)) continue;
    // Policy last: it is the one filter that is not a pure function of data we hold.
    if (!policy.offers(spec, principal)) continue;
    selected.push(spec);
  }
  // Names are ASCII by the grammar, so code-unit order is code-point order.
  return selected.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The pinned set: specs sorted by name, and tool_schema_sha256 = sha256 (lowercase hex) of
 * the canonical JSON of the full spec list. Same specs, same hash, whatever the registration
 * order.
 */
export function pinSpecs(specs: readonly ToolSpec[]): PinnedToolSet {
  const toolSchemaSha256 = sha256Hex(canonicalJson(specs));
  return Object.freeze({
    toolSchemaSha256,
    specs: Object.freeze([...specs]),
    toolNames: Object.freeze(specs.map((spec) => spec.name)),
  });
}

/**
 * § Milestone 26: a `model_visible: false` tool is pinned (callable by the application) but
 * not advertised to the model. What the context engine sends as tool definitions.
 */
export function advertised(pinned: PinnedToolSet): ToolSpec[] {
  return pinned.specs.filter((spec) => spec.model_visible);
}
