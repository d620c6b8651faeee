import { platformRefusalItem, type InvocationStatus, type ToolResultItem } from '@veetbot/domain';

/** A step's result: its value, or the call concluded there. */
export type StepResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly concluded: Concluded };

export const proceed = <T>(value: T): StepResult<T> => ({ ok: true, value });
export const stop = (concluded: Concluded): StepResult<never> => ({ ok: false, concluded });

export interface Concluded {
  readonly kind: 'concluded';
  readonly invocationStatus: InvocationStatus;
  readonly item: ToolResultItem;
}

/**
 * A call the pipeline ended itself (no tool ran). The platform is speaking, so the item's
 * trust is PLATFORM; `notes` are platform-written text (a schema path, never a value).
 */
export function concludeWithoutExecution(
  callId: string,
  action: string,
  reasonCode: string,
  invocationStatus: InvocationStatus,
  notes: readonly string[] = [],
): Concluded {
  return { kind: 'concluded', invocationStatus, item: platformRefusalItem(callId, action, reasonCode, notes) };
}
