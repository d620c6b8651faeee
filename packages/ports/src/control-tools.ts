import type { SuspendedKind, ToolResultInput } from '@veetbot/domain';
import type { ToolExecutionContext } from './tool';

/**
 * § Control tools: what running one answered. Two of the five suspend instead of returning:
 * conversation.ask_user and delegate.run commit their row RUNNING with a suspension marker, and
 * the resumption path completes it when the answer or the child's result arrives.
 */
export type ControlExecution =
  | { readonly kind: 'returned'; readonly value: ToolResultInput }
  | { readonly kind: 'suspended'; readonly suspendedKind: SuspendedKind; readonly suspendedRef: string };

/**
 * § Control tools: "executed by the runtime rather than dispatched to a target". Step 10 hands a
 * ToolKind CONTROL call here instead of calling Tool.execute; everything around it (steps 1–9,
 * 11–14) is the one pipeline's. The runtime implements it (docs/adr/0034).
 */
export interface ControlToolHost {
  execute(name: string, args: Record<string, unknown>, context: ToolExecutionContext): Promise<ControlExecution>;
}
