import { platformRefusalItem, ToolResultItem } from '@veetbot/domain';
import type { BridgeOutcome } from '@veetbot/ports';

/**
 * A refusal by the bridge itself, in the shape the model reads (§ The bridge: one place where
 * outcome shapes are defined): the table's outcome for `reasonCode`, no content, PLATFORM trust
 * (the text is the platform's own).
 */
export function bridgeRefusal(callId: string, toolName: string, reasonCode: string): BridgeOutcome {
  return platformRefusalItem(callId, toolName, reasonCode);
}

/**
 * What the handler answered, held to the allowlist: a strictly valid ToolResultItem whose
 * call_id is this call's. Anything else (a wiring fault) is answered as tool.internal, so an
 * extra field can never reach the program.
 */
export function checkedOutcome(answer: unknown, callId: string, toolName: string): BridgeOutcome {
  const parsed = ToolResultItem.safeParse(answer);
  if (!parsed.success || parsed.data.call_id !== callId) return bridgeRefusal(callId, toolName, 'tool.internal.bridge_handler');
  return parsed.data;
}
