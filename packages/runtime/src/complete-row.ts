import { reasonCodeEntry } from '@veetbot/domain';
import { toolEvent } from '@veetbot/executor';
import type { InvocationRow, InvocationStore, LeaseFence, TerminalInvocationStatus } from '@veetbot/ports';

const EVENT_FOR = {
  succeeded: 'tool.call.completed',
  failed: 'tool.call.failed',
  denied: 'tool.call.denied',
  uncertain: 'tool.call.uncertain',
} as const;

/**
 * End a non-terminal row without a tool result — a breaker refusal, a suspended call of a
 * cancelled run, a recovery the pipeline declined — with its terminal event in the same
 * transaction. Fenced: a stale worker's write is refused (FencingError).
 */
export function completeWithoutResult(
  invocations: InvocationStore,
  tenantId: string,
  row: InvocationRow,
  fence: LeaseFence,
  now: Date,
  status: TerminalInvocationStatus,
  reasonCode: string,
): Promise<InvocationRow> {
  const outcomeStatus = reasonCodeEntry(reasonCode)?.status ?? status;
  return invocations.complete(
    tenantId,
    row.id,
    fence,
    {
      status,
      outcomeStatus,
      reasonCode,
      // The platform is speaking: nothing a tool said is in this row.
      result: { content: [], structured: null, trust: 'platform' },
      error: null,
      outputBytes: null,
      truncated: false,
      artifactId: null,
      finishedAt: now,
    },
    [
      toolEvent(EVENT_FOR[status], row, now, {
        outcome_status: outcomeStatus,
        reason_code: reasonCode,
        effect_sent: row.effectSentAt !== null,
        duration_ms: null,
        output_bytes: null,
        truncated: false,
      }),
    ],
  );
}
