import { reasonCodeEntry, type RenderedContentPart, type ToolOutcomeStatus } from '@veetbot/domain';
import type { InvocationRow, NewEvent, TerminalInvocationStatus, ToolCallEventType } from '@veetbot/ports';
import type { DurableDeps, RunContext } from '../durable-deps';
import type { Concluded } from '../render-item';
import { toolEvent } from '../tool-events';
import type { PersistedResult } from './step-14-render-outcome';
import { renderToolResultItem } from './step-14-render-outcome';

export type Terminated = Concluded & { readonly row: InvocationRow };

const EVENT_FOR: Record<TerminalInvocationStatus, ToolCallEventType> = {
  succeeded: 'tool.call.completed',
  failed: 'tool.call.failed',
  denied: 'tool.call.denied',
  uncertain: 'tool.call.uncertain',
};

export interface TerminalFacts {
  readonly status: TerminalInvocationStatus;
  readonly reasonCode: string;
  readonly result: PersistedResult;
  readonly error: unknown;
  readonly outputBytes: number | null;
  readonly truncated: boolean;
  readonly artifactId: string | null;
  readonly durationMs: number | null;
  /**
   * The watermark was committed during this attempt. `row` is the row as claimed at step 9, so
   * its effect_sent_at predates step 10's watermark; without this the terminal event would say
   * effect_sent: false for a call whose effect was marked sent.
   */
  readonly effectSent?: boolean;
}

/** The terminal write shared by step 13 and every path that ends a row without a result. */
export async function writeTerminal(d: DurableDeps, tenantId: string, row: InvocationRow, run: RunContext, now: Date, facts: TerminalFacts): Promise<Terminated> {
  const entry = reasonCodeEntry(facts.reasonCode);
  const outcomeStatus: ToolOutcomeStatus = entry?.status ?? (facts.status === 'succeeded' ? 'succeeded' : facts.status);
  const events: NewEvent[] = [
    toolEvent(EVENT_FOR[facts.status], row, now, {
      outcome_status: outcomeStatus,
      reason_code: facts.reasonCode,
      effect_sent: row.effectSentAt !== null || facts.effectSent === true,
      duration_ms: facts.durationMs,
      output_bytes: facts.outputBytes,
      truncated: facts.truncated,
    }),
  ];
  const completed = await d.invocations.complete(
    tenantId,
    row.id,
    run.fence,
    {
      status: facts.status,
      outcomeStatus,
      reasonCode: facts.reasonCode,
      result: facts.result,
      error: facts.error,
      outputBytes: facts.outputBytes,
      truncated: facts.truncated,
      artifactId: facts.artifactId,
      finishedAt: now,
    },
    events,
  );
  return { kind: 'concluded', invocationStatus: completed.status, item: renderToolResultItem(completed), row: completed };
}

/** A row that ends without a tool result (denied approval, recovery's uncertain, exhausted attempts). */
export function completeWithoutExecution(
  d: DurableDeps,
  tenantId: string,
  row: InvocationRow,
  run: RunContext,
  now: Date,
  status: TerminalInvocationStatus,
  reasonCode: string,
  notes: readonly RenderedContentPart[] = [],
): Promise<Terminated> {
  return writeTerminal(d, tenantId, row, run, now, {
    status,
    reasonCode,
    result: { content: [...notes], structured: null, trust: 'platform' },
    error: null,
    outputBytes: null,
    truncated: false,
    artifactId: null,
    durationMs: null,
  });
}
