import { BreakerCounter, isTerminalInvocationStatus } from '@veetbot/domain';
import type { BreakerTallyGroup } from '@veetbot/ports';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replayBreaker } from '../src/breaker-replay';

/** One invocation row as the breaker sees it. */
type BreakerRow = Omit<BreakerTallyGroup, 'count'>;

/**
 * What InvocationStore.breakerTally returns for these rows (ports/stores.ts): identical
 * (key, outcome) rows counted together, in no promised order. The store's own SQL is held to
 * this by the store contract (invocations.contract.ts, "breakerTally counts ...").
 */
function groupsOf(rows: readonly BreakerRow[]): BreakerTallyGroup[] {
  const groups = new Map<string, BreakerTallyGroup>();
  for (const { toolName, argumentsHash, status, outcomeStatus, reasonCode } of rows) {
    const key = JSON.stringify([toolName, argumentsHash, status, outcomeStatus, reasonCode]);
    const count = (groups.get(key)?.count ?? 0) + 1;
    groups.set(key, { toolName, argumentsHash, status, outcomeStatus, reasonCode, count });
  }
  return [...groups.values()];
}

/** The replay ADR 0010 specifies: every row, one by one, in any order — one check per row, one record per terminal row. */
function rowByRow(rows: readonly BreakerRow[]): BreakerCounter {
  const counter = new BreakerCounter();
  for (const row of rows) {
    counter.check({ name: row.toolName, argumentsHash: row.argumentsHash });
    if (isTerminalInvocationStatus(row.status) && row.outcomeStatus !== null && row.reasonCode !== null) {
      counter.record({
        name: row.toolName,
        argumentsHash: row.argumentsHash,
        outcomeStatus: row.outcomeStatus,
        reasonCode: row.reasonCode,
      });
    }
  }
  return counter;
}

// Few names, hashes and reasons, so identical calls and repeated denials are common.
const row: fc.Arbitrary<BreakerRow> = fc.oneof(
  fc.record({
    toolName: fc.constantFrom('demo.a', 'demo.b'),
    argumentsHash: fc.constantFrom('h1', 'h2'),
    status: fc.constantFrom('proposed' as const, 'authorized' as const, 'running' as const, 'waiting_for_approval' as const),
    outcomeStatus: fc.constant(null),
    reasonCode: fc.constant(null),
  }),
  fc.record({
    toolName: fc.constantFrom('demo.a', 'demo.b'),
    argumentsHash: fc.constantFrom('h1', 'h2'),
    status: fc.constantFrom('succeeded' as const, 'failed' as const, 'denied' as const, 'uncertain' as const),
    outcomeStatus: fc.constantFrom(
      'succeeded' as const,
      'failed' as const,
      'denied' as const,
      'unavailable' as const,
      'uncertain' as const,
    ),
    reasonCode: fc.constantFrom('policy.rule.denied', 'tool.loop_detected', 'tool.outcome_unknown', 'tool.ok'),
  }),
);

describe('replayBreaker over a tally (ADR 0016)', () => {
  it('gives the state a row-by-row replay gives, for any rows in any order', () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 40 }), (rows) => {
        const expected = rowByRow(rows);
        const replayed = replayBreaker(groupsOf(rows));
        expect(replayed.toJSON()).toEqual(expected.toJSON());
        expect(replayed.synthesisOnly()).toBe(expected.synthesisOnly());
      }),
      { numRuns: 500 },
    );
  });

  it('counts a group of n rows n times: the fourth identical call makes the next turn synthesis-only', () => {
    const group: BreakerTallyGroup = {
      toolName: 'demo.a',
      argumentsHash: 'h1',
      status: 'succeeded',
      outcomeStatus: 'succeeded',
      reasonCode: 'tool.ok',
      count: 4,
    };
    const counter = replayBreaker([group]);
    expect(counter.callCount({ name: 'demo.a', argumentsHash: 'h1' })).toBe(4);
    expect(counter.synthesisOnly()).toBe(true);
    expect(counter.check({ name: 'demo.a', argumentsHash: 'h1' }).verdict).toBe('loop_detected');
  });
});
