import { BreakerCounter } from '@veetbot/domain';
import type { BreakerTallyGroup } from '@veetbot/ports';
import { describe, expect, it } from 'vitest';
import { replayBreaker } from '../src/breaker-replay';
import { BreakerLedger } from '../src/held-tallies';

// docs/adr/0078: the replay from rows plus the run's breaker evidence decides as the live counter.

const PAGE = { name: 'web.fetch', argumentsHash: 'a'.repeat(64) };
const group = (count: number): BreakerTallyGroup => ({
  toolName: PAGE.name,
  argumentsHash: PAGE.argumentsHash,
  status: 'succeeded',
  outcomeStatus: 'succeeded',
  reasonCode: 'tool.ok',
  count,
});

/** A live run of `keys.length` identical calls, each recording its key. */
function live(keys: readonly string[]): BreakerCounter {
  const counter = new BreakerCounter();
  for (const key of keys) {
    counter.check(PAGE);
    counter.record({ ...PAGE, outcomeStatus: 'succeeded', reasonCode: 'tool.ok', evidenceKey: key });
  }
  return counter;
}

describe('replayBreaker with the run evidence (the api step view)', () => {
  it('is not synthesis-only when the restarts took the near count down; is without the evidence', () => {
    const counter = live(['a', 'b', 'c', 'd']); // restarts at b, c, d: count 1
    const evidence = counter.evidenceCheckpoint();
    expect(replayBreaker([group(4)], evidence).synthesisOnly()).toBe(false);
    expect(replayBreaker([group(4)], evidence).callCount(PAGE)).toBe(1);
    // Strict without it: four identical calls are one below the threshold.
    expect(replayBreaker([group(4)]).synthesisOnly()).toBe(true);
  });
});

describe('BreakerLedger carries the evidence', () => {
  it('a ledger read from the store and a held one decide the same, and evidenceAfter is null when nothing changed', () => {
    const counter = live(['a', 'a', 'b']); // restart at b: count 1, discounted 2
    const evidence = counter.evidenceCheckpoint();
    const ledger = BreakerLedger.of([group(3)], evidence);
    const replayed = ledger.counter([PAGE]).counter;
    expect(replayed.callCount(PAGE)).toBe(1);
    expect(replayed.restartsUsed()).toBe(1);
    expect(ledger.evidenceAfter(replayed)).toBeNull();
    // The next call reads a new page: the evidence changes and is handed to the finish.
    replayed.check(PAGE);
    replayed.record({ ...PAGE, outcomeStatus: 'succeeded', reasonCode: 'tool.ok', evidenceKey: 'c' });
    const next = ledger.evidenceAfter(replayed);
    expect(next).toEqual({
      version: 1,
      evidence_restarts: 2,
      calls: [{ name: PAGE.name, arguments_hash: PAGE.argumentsHash, discounted: 3, last_evidence_key: 'c' }],
    });
  });
});
