import { BreakerCounter, isTerminalInvocationStatus } from '@veetbot/domain';
import type { InvocationRow } from '@veetbot/ports';

/**
 * § The circuit breakers: "the control is derived from checkpointed counts, so approval and
 * crash resumption obey the same rule". The checkpoint is the invocation rows themselves
 * (docs/adr draft in the runtime README, "Where the breaker state lives"): every call the
 * runtime dispatched or refused has exactly one row, so replaying the rows of the earlier
 * steps through the counter — one check per row, one record per terminal row — gives the
 * state any worker would have, whoever ran those steps and whether or not it crashed.
 *
 * Counts do not depend on the order of check and record, so replaying row by row gives the
 * same state as the live path (every check before dispatch, every record after).
 *
 * Not reproduced: evidence restarts (§ New evidence). An evidence key is "never stored with
 * the result", so a replayed counter has none and counts every identical call — the strict
 * direction. Within a batch the live evidence keys still apply.
 */
export function replayBreaker(rows: Iterable<InvocationRow>): BreakerCounter {
  const counter = new BreakerCounter();
  for (const row of rows) {
    counter.check({ name: row.toolName, argumentsHash: row.argumentsHash });
    if (isTerminalInvocationStatus(row.status) && row.outcomeStatus !== null && row.reasonCode !== null) {
      counter.record({ name: row.toolName, argumentsHash: row.argumentsHash, outcomeStatus: row.outcomeStatus, reasonCode: row.reasonCode });
    }
  }
  return counter;
}
