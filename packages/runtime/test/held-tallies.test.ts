import type { BreakerCall, BreakerCounter } from '@veetbot/domain';
import type { BreakerTallyGroup, InvocationRow } from '@veetbot/ports';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replayBreaker } from '../src/breaker-replay';
import { BreakerLedger, HeldTallies } from '../src/held-tallies';

type Group = BreakerTallyGroup;

// Several keys, few of them repeated often: most keys stay far from a threshold, some reach it.
const group: fc.Arbitrary<Group> = fc.oneof(
  fc.record({
    toolName: fc.constantFrom('demo.a', 'demo.b', 'demo.c'),
    argumentsHash: fc.constantFrom('h1', 'h2', 'h3', 'h4'),
    status: fc.constantFrom('proposed' as const, 'running' as const, 'waiting_for_approval' as const),
    outcomeStatus: fc.constant(null),
    reasonCode: fc.constant(null),
    count: fc.integer({ min: 1, max: 3 }),
  }),
  fc.record({
    toolName: fc.constantFrom('demo.a', 'demo.b', 'demo.c'),
    argumentsHash: fc.constantFrom('h1', 'h2', 'h3', 'h4'),
    status: fc.constantFrom('succeeded' as const, 'failed' as const, 'denied' as const, 'uncertain' as const),
    outcomeStatus: fc.constantFrom('succeeded' as const, 'failed' as const, 'denied' as const, 'uncertain' as const),
    reasonCode: fc.constantFrom('policy.rule.denied', 'tool.ok', 'tool.outcome_unknown'),
    count: fc.integer({ min: 1, max: 3 }),
  }),
);
const call: fc.Arbitrary<BreakerCall> = fc.record({
  name: fc.constantFrom('demo.a', 'demo.b', 'demo.c'),
  argumentsHash: fc.constantFrom('h1', 'h2', 'h3', 'h4', 'h5'),
});

/** What a step decides with a counter: each call's verdict, then synthesis-only before and after its outcomes. */
function decisions(counter: BreakerCounter, batch: readonly BreakerCall[], outcomes: readonly Group[]): unknown {
  const before = counter.synthesisOnly();
  const verdicts = batch.map((c) => counter.check(c).verdict);
  const tripped = outcomes.map(
    (o) =>
      o.outcomeStatus !== null &&
      o.reasonCode !== null &&
      counter.record({ name: o.toolName, argumentsHash: o.argumentsHash, outcomeStatus: o.outcomeStatus, reasonCode: o.reasonCode })
        .tripped,
  );
  return { before, verdicts, tripped, after: counter.synthesisOnly() };
}

describe('BreakerLedger (docs/adr/0049)', () => {
  it("decides exactly what a full replay decides, replaying only the step's keys and those near a threshold", () => {
    fc.assert(
      fc.property(fc.array(group, { maxLength: 40 }), fc.array(call, { minLength: 1, maxLength: 6 }), (groups, batch) => {
        // The step's outcomes carry its calls' keys, as its rows do.
        const outcomes = batch.map((c, i) => ({
          toolName: c.name,
          argumentsHash: c.argumentsHash,
          status: 'denied' as const,
          outcomeStatus: i % 2 === 0 ? ('denied' as const) : ('succeeded' as const),
          reasonCode: 'policy.rule.denied',
          count: 1,
        }));
        const full = decisions(replayBreaker(groups), batch, outcomes);
        const ledger = BreakerLedger.of(groups).counter(batch);
        expect(decisions(ledger.counter, batch, outcomes)).toEqual(full);
      }),
      { numRuns: 1000 },
    );
  });

  it('brings in a key the step records but did not plan, before it is recorded', () => {
    const denial: Group = {
      toolName: 'demo.a',
      argumentsHash: 'h1',
      status: 'denied',
      outcomeStatus: 'denied',
      reasonCode: 'policy.rule.denied',
      count: 1,
    };
    // One denial is near (any denial is); the second makes it two of three.
    const ledger = BreakerLedger.of([denial, { ...denial, toolName: 'demo.b', count: 1 }]);
    const { counter, include } = ledger.counter([{ name: 'demo.c', argumentsHash: 'h9' }]);
    include({ name: 'demo.a', argumentsHash: 'h1' });
    expect(counter.denialCount({ name: 'demo.a', argumentsHash: 'h1', reasonCode: 'policy.rule.denied' })).toBe(1);
    expect(
      counter.record({ name: 'demo.a', argumentsHash: 'h1', outcomeStatus: 'denied', reasonCode: 'policy.rule.denied' }).tripped,
    ).toBeNull();
  });

  it('counts the rows the budget is charged for, without the orchestrations', () => {
    const ledger = BreakerLedger.of([
      { toolName: 'demo.a', argumentsHash: 'h1', status: 'succeeded', outcomeStatus: 'succeeded', reasonCode: 'tool.ok', count: 3 },
      {
        toolName: 'sandbox.run_orchestration',
        argumentsHash: 'h2',
        status: 'succeeded',
        outcomeStatus: 'succeeded',
        reasonCode: 'tool.ok',
        count: 2,
      },
    ]);
    expect(ledger.charged).toBe(3);
  });
});

describe('HeldTallies', () => {
  const row = (stepNumber: number, argumentsHash: string): InvocationRow =>
    ({
      toolName: 'demo.a',
      argumentsHash,
      status: 'succeeded',
      outcomeStatus: 'succeeded',
      reasonCode: 'tool.ok',
      stepNumber,
    }) as InvocationRow;

  it('keeps the ledger with the step and token it was finished under, adding the step’s rows', () => {
    const held = new HeldTallies();
    const ledger = BreakerLedger.of([]);
    held.keep('t', 'r', { fencingToken: 7, stepNumber: 3 }, ledger, [row(3, 'h1'), row(3, 'h1')]);
    const got = held.get('t', 'r');
    expect(got).toMatchObject({ fencingToken: 7, throughStep: 3 });
    expect(got?.ledger.charged).toBe(2);
    expect(got?.ledger.counter([{ name: 'demo.a', argumentsHash: 'h1' }]).counter.callCount({ name: 'demo.a', argumentsHash: 'h1' })).toBe(
      2,
    );
    held.forget('t', 'r');
    expect(held.get('t', 'r')).toBeUndefined();
  });

  it('holds at most its number of call keys: the least recently used runs go first, a run larger than that is not held', () => {
    const held = new HeldTallies(4);
    const twoKeys = (run: string) =>
      held.keep('t', run, { fencingToken: 1, stepNumber: 1 }, BreakerLedger.of([]), [row(1, `${run}1`), row(1, `${run}2`)]);
    twoKeys('a');
    twoKeys('b');
    held.get('t', 'a');
    twoKeys('c');
    expect(held.get('t', 'a')).toBeDefined();
    expect(held.get('t', 'b')).toBeUndefined();
    expect(held.get('t', 'c')).toBeDefined();
    // Kept again under a new step: counted once, not twice.
    held.keep('t', 'c', { fencingToken: 2, stepNumber: 2 }, held.get('t', 'c')!.ledger, []);
    expect(held.get('t', 'a')).toBeDefined();
    const big = BreakerLedger.of([]);
    held.keep('t', 'd', { fencingToken: 1, stepNumber: 1 }, big, [row(1, 'd1'), row(1, 'd2'), row(1, 'd3'), row(1, 'd4'), row(1, 'd5')]);
    expect(held.get('t', 'd')).toBeUndefined();
    expect(held.get('t', 'a')).toBeDefined();
  });
});
