import type { Reconcilers } from '@veetbot/ports';

/**
 * Several deployments' reconcilers as one (docs/adr/0063, 0066): the builtins' and the operator
 * MCP servers' lookups. Their tool names never overlap (`mcp.*` is the adapter's alone), but the
 * first set that answers for a tool wins, so the order is the composition root's to state.
 */
export function composeReconcilers(...sets: readonly (Reconcilers | undefined)[]): Reconcilers {
  const present = sets.filter((set): set is Reconcilers => set !== undefined);
  return {
    forTool(toolName, toolVersion) {
      for (const set of present) {
        const found = set.forTool(toolName, toolVersion);
        if (found !== null) return found;
      }
      return null;
    },
    toolNames: () => [...new Set(present.flatMap((set) => set.toolNames()))],
  };
}
