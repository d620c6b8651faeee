import {
  type BrowserDiagnostics,
  minimumTrust,
  reasonCodeEntry,
  type RenderedContentPart,
  type ToolOutcomeStatus,
  type TrustLevel,
} from '@veetbot/domain';
import type { InvocationRow, NewEvent, TerminalInvocationStatus, ToolCallEventType } from '@veetbot/ports';
import type { DurableDeps, RunContext } from '../durable-deps';
import type { Concluded } from '../render-item';
import { toolEvent } from '../tool-events';
import type { PersistedResult } from '../steps/step-14-render-outcome';
import { renderToolResultItem } from '../steps/step-14-render-outcome';

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
  /** ADR-0158: a builtin browser tool's trusted diagnostics, on its completed or failed event. */
  readonly browserDiagnostics?: BrowserDiagnostics;
  /** Run-level events committed with the terminal one (a resumption's `run.resumed`, docs/adr/0034). */
  readonly events?: readonly NewEvent[];
}

/** What a terminal write needs: the store that performs it and the fence it is made under. */
export type TerminalWriter = Pick<DurableDeps, 'invocations'>;

/**
 * The terminal write (docs/adr/0028): the only code that ends a tool_invocations row — step 13
 * and every path that ends a row without a result — with exactly one terminal tool event in the
 * same transaction. Fenced: a stale worker's write is refused (FencingError).
 */
export async function writeTerminal(
  d: TerminalWriter,
  tenantId: string,
  row: InvocationRow,
  run: Pick<RunContext, 'fence'>,
  now: Date,
  facts: TerminalFacts,
): Promise<Terminated> {
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
      ...(facts.browserDiagnostics !== undefined && (facts.status === 'succeeded' || facts.status === 'failed')
        ? { browser_diagnostics: facts.browserDiagnostics }
        : {}),
    }),
    ...(facts.events ?? []),
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

/**
 * A row that ends without a tool result: a denied approval, recovery's uncertain, exhausted
 * attempts, a breaker/budget/deadline refusal, a suspended call of a cancelled run, a recovery
 * the re-check refused. The platform is speaking: nothing a tool said is in the row, and `notes`
 * are platform-written text.
 */
export function endWithoutResult(
  d: TerminalWriter,
  tenantId: string,
  row: InvocationRow,
  run: Pick<RunContext, 'fence'>,
  now: Date,
  status: TerminalInvocationStatus,
  reasonCode: string,
  notes: readonly RenderedContentPart[] = [],
  events: readonly NewEvent[] = [],
): Promise<Terminated> {
  return writeTerminal(d, tenantId, row, run, now, {
    events,
    status,
    reasonCode,
    // A note is platform text, except a deferred tool's own input schema (step 0), whose label
    // is its author's: the item is never more trusted than its least trusted part.
    result: { content: [...notes], structured: null, trust: minimumTrust(notes.flatMap(noteTrust), 'platform') },
    error: null,
    outputBytes: null,
    truncated: false,
    artifactId: null,
    durationMs: null,
  });
}

function noteTrust(part: RenderedContentPart): TrustLevel[] {
  return part.type === 'text' ? [part.trust] : [];
}
