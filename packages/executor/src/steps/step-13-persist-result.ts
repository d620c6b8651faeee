import type { InvocationRow, NewEvent } from '@veetbot/ports';
import type { DurableDeps, RunContext } from '../durable-deps';
import type { ValidatedResult } from './step-11-validate-result';
import type { OutputDecision } from './step-12-truncate-or-artifactize';
import { writeTerminal, type Terminated } from '../lifecycle/terminal-write';

/**
 * Step 13 [COMMIT]: persist the result — terminal status, outcome_status, reason_code, the
 * rendered content (what step 14 reads back), the failure with its detail and external text
 * (the row is tenant-scoped; the event carries none of it), output_bytes, truncated,
 * artifact_id — with the terminal tool event in the same transaction. Fenced.
 */
export function persistResult(
  d: DurableDeps,
  tenantId: string,
  row: InvocationRow,
  run: Pick<RunContext, 'fence'>,
  now: Date,
  result: ValidatedResult,
  output: OutputDecision,
  events: readonly NewEvent[] = [],
): Promise<Terminated> {
  const tooLarge = output.overflow !== null && result.status === 'succeeded';
  return writeTerminal(d, tenantId, row, run, now, {
    status: tooLarge ? 'failed' : result.status,
    reasonCode: tooLarge ? 'tool.output_too_large' : result.reasonCode,
    result: {
      content: output.parts,
      structured: tooLarge ? null : result.structured,
      trust: output.parts.length === 0 ? 'platform' : result.trust,
    },
    error: result.failure,
    outputBytes: output.outputBytes,
    truncated: output.truncated,
    artifactId: output.artifactId,
    durationMs: result.durationMs,
    effectSent: result.effectSent,
    ...(result.browserDiagnostics === undefined || result.browserDiagnostics === null
      ? {}
      : { browserDiagnostics: result.browserDiagnostics }),
    events,
  });
}
