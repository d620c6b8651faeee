import { ToolNotFoundError, VeetbotError, type ToolSpec } from '@veetbot/domain';
import type { PinnedToolSet, Tool, ToolRegistry } from '@veetbot/ports';
import { concludeWithoutExecution, proceed, stop, type StepResult } from '../render-item';
import { displayedToolName } from '../displayed-tool-name';

/**
 * Step 1. § Resolution: an unknown tool is denied with policy.matrix.unknown_tool BEFORE
 * policy — there is no ToolSpec to build a ProposedAction from. A session resolves the
 * version it pinned, so a resumed run calls what it advertised.
 */
const pinIndexes = new WeakMap<PinnedToolSet, ReadonlyMap<string, ToolSpec>>();

/** name -> pinned spec, built once per pinned set (a session pins tens of tools; calls are many). */
export function pinnedSpecOf(pinned: PinnedToolSet, toolName: string): ToolSpec | undefined {
  let index = pinIndexes.get(pinned);
  if (index === undefined) {
    index = new Map(pinned.specs.map((s) => [s.name, s]));
    pinIndexes.set(pinned, index);
  }
  return index.get(toolName);
}

export function resolveTool(registry: ToolRegistry, pinned: PinnedToolSet | null, toolName: string, callId: string): StepResult<Tool> {
  const pinnedSpec = pinned === null ? undefined : pinnedSpecOf(pinned, toolName);
  try {
    return proceed(pinnedSpec ? registry.get(toolName, pinnedSpec.version) : registry.get(toolName));
  } catch (error) {
    if (error instanceof ToolNotFoundError || (VeetbotError.isInstance(error) && error.code === 'registry.tool_not_found')) {
      // Advertised but no longer resolvable at the pinned version (a server withdrew or changed
      // it): unavailable, never a rewrite of the pin (§ Advertisement is pinned).
      if (pinnedSpec !== undefined) return stop(concludeWithoutExecution(callId, toolName, 'tool.withdrawn', 'failed'));
      return stop(concludeWithoutExecution(callId, displayedToolName(toolName), 'policy.matrix.unknown_tool', 'denied'));
    }
    throw error;
  }
}
