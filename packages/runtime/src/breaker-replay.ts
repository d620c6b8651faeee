import { BreakerCounter, type BreakerEvidence, isTerminalInvocationStatus } from '@veetbot/domain';
import type { BreakerTallyGroup } from '@veetbot/ports';

/**
 * § The circuit breakers: "the control is derived from checkpointed counts, so approval and
 * crash resumption obey the same rule". The checkpoint is the invocation rows themselves
 * (docs/adr draft in the runtime README, "Where the breaker state lives"): every call the
 * runtime dispatched or refused has exactly one row, so replaying the rows of the earlier
 * steps through the counter — one check per row, one record per terminal row — gives the
 * state any worker would have, whoever ran those steps and whether or not it crashed.
 *
 * Counts do not depend on the order of check and record, so replaying row by row gives the
 * same state as the live path (every check before dispatch, every record after) — and the
 * rows need not be read at all: the store's breakerTally counts them by key and outcome in
 * the database, and a group of n identical rows replays as n rows. A step's cost then does
 * not grow with what the earlier rows carry (their arguments and results).
 *
 * Evidence restarts (§ New evidence) are not in the rows — an evidence key is "never stored
 * with the result" — so they come from the run's breaker evidence (docs/adr/0078), written with
 * each step's finish: how many calls the restarts took off each count, each call's last key and
 * the restarts spent. Without it the replay counts every identical call, the strict direction.
 */
export function replayBreaker(groups: Iterable<BreakerTallyGroup>, evidence: BreakerEvidence | null = null): BreakerCounter {
  const counter = new BreakerCounter();
  replayGroups(counter, groups);
  if (evidence !== null) {
    counter.applyEvidenceRestarts(evidence.evidence_restarts);
    for (const entry of evidence.calls) counter.applyEvidence(entry);
  }
  return counter;
}

/** Replay `groups` into `counter` (held-tallies.ts brings keys into a counter this way). */
export function replayGroups(counter: BreakerCounter, groups: Iterable<BreakerTallyGroup>): void {
  // A group of n rows is n checks of its key and, when terminal with an outcome, n records of
  // it; test/breaker-replay.test.ts holds this to a row-by-row replay.
  for (const group of groups) {
    const { outcomeStatus, reasonCode } = group;
    const outcome =
      isTerminalInvocationStatus(group.status) && outcomeStatus !== null && reasonCode !== null ? { outcomeStatus, reasonCode } : null;
    counter.replay({ name: group.toolName, argumentsHash: group.argumentsHash }, outcome, group.count);
  }
}
