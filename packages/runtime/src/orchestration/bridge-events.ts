import type { NewEvent, ToolExecutionContext } from '@veetbot/ports';

/** § The programmatic orchestration bridge: the turn's two events (docs/adr/0039). */
export const BRIDGE_EVENT_TYPES = {
  opened: 'bridge.session.opened',
  closed: 'bridge.session.closed',
} as const;

/** How a turn ended: the sandbox's ending, or `approval_hold` when it was torn down to wait. */
export type BridgeTurnEnding = string;

/**
 * Identity only, like the tool events: the orchestration's invocation, run, step and call, the
 * script's hash, the turn's id and its counts — never the source, a call's arguments or output.
 * Each turn is its own fact (a replay opens a new turn), so the turn id is in the key.
 */
export function bridgeEvent(
  type: (typeof BRIDGE_EVENT_TYPES)[keyof typeof BRIDGE_EVENT_TYPES],
  context: Pick<ToolExecutionContext, 'invocationId' | 'runId' | 'stepNumber' | 'callId' | 'idempotencyKey' | 'attemptNumber'>,
  turnId: string,
  scriptHash: string,
  at: Date,
  extra: Readonly<Record<string, string | number | null>>,
): NewEvent {
  return {
    runId: context.runId,
    type,
    payload: {
      invocation_id: context.invocationId,
      run_id: context.runId,
      step_number: context.stepNumber,
      call_id: context.callId,
      attempt_number: context.attemptNumber,
      turn_id: turnId,
      script_hash: scriptHash,
      ...extra,
    },
    derivationKey: `${context.idempotencyKey}:${type}:${turnId}`,
    createdAt: at,
  };
}
