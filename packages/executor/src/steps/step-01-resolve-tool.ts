import { ToolNotFoundError, VeetbotError } from '@veetbot/domain';
import type { PinnedToolSet, Tool, ToolRegistry } from '@veetbot/ports';
import { concludeWithoutExecution, proceed, stop, type StepResult } from '../render-item';

/**
 * Step 1. § Resolution: an unknown tool is denied with policy.matrix.unknown_tool BEFORE
 * policy — there is no ToolSpec to build a ProposedAction from. A session resolves the
 * version it pinned, so a resumed run calls what it advertised.
 */
export function resolveTool(registry: ToolRegistry, pinned: PinnedToolSet | null, toolName: string, callId: string): StepResult<Tool> {
  const pinnedSpec = pinned?.specs.find((s) => s.name === toolName);
  try {
    return proceed(pinnedSpec ? registry.get(toolName, pinnedSpec.version) : registry.get(toolName));
  } catch (error) {
    if (error instanceof ToolNotFoundError || (VeetbotError.isInstance(error) && error.code === 'registry.tool_not_found')) {
      return stop(concludeWithoutExecution(callId, toolName, 'policy.matrix.unknown_tool', 'denied'));
    }
    throw error;
  }
}
