import { describe, expect, it } from 'vitest';
import {
  BREAKER_REASON_CODES,
  BreakerState,
  DENIED_PROPOSAL_THRESHOLD,
  EVIDENCE_RESTART_CAP,
  IDENTICAL_CALL_THRESHOLD,
  ToolLoopDetectedError,
  ToolPolicyDeniedError,
  UNCERTAIN_PROPOSAL_THRESHOLD,
} from '../src/breaker';
import { BreakerCounter, VeetbotError, argumentsHash, isKnownReasonCode } from '../src/index';
import type { BreakerCall } from '../src/index';

// § The circuit breakers, New evidence, Answer before the limit.

const call = (name: string, args: Record<string, unknown>): BreakerCall => ({ name, argumentsHash: argumentsHash(args) });
const SEARCH = call('web.search', { q: 'veetbot' });
const OTHER = call('web.search', { q: 'something else' });
const PAGE = call('browser.observe', { tab: 1 });

/** One full identical call: check before dispatch, then record a success (optionally keyed). */
function observe(counter: BreakerCounter, c: BreakerCall, evidenceKey?: string): string {
  const { verdict } = counter.check(c);
  if (verdict === 'ok') counter.record({ ...c, outcomeStatus: 'succeeded', reasonCode: 'tool.ok', evidenceKey: evidenceKey ?? null });
  return verdict;
}

describe('thresholds', () => {
  it('are the specification table', () => {
    expect([DENIED_PROPOSAL_THRESHOLD, IDENTICAL_CALL_THRESHOLD, UNCERTAIN_PROPOSAL_THRESHOLD, EVIDENCE_RESTART_CAP]).toEqual([
      3, 5, 1, 32,
    ]);
    for (const code of Object.values(BREAKER_REASON_CODES)) expect(isKnownReasonCode(code)).toBe(true);
  });
});

describe('identical denied proposals', () => {
  it('two denials pass, the third trips ToolPolicyDenied', () => {
    const counter = new BreakerCounter();
    const denied = { ...SEARCH, outcomeStatus: 'denied' as const, reasonCode: 'policy.rule.denied' };
    expect(counter.check(SEARCH).verdict).toBe('ok');
    expect(counter.record(denied)).toEqual({ tripped: null });
    expect(counter.check(SEARCH).verdict).toBe('ok');
    expect(counter.record(denied)).toEqual({ tripped: null });
    expect(counter.check(SEARCH).verdict).toBe('ok');
    expect(counter.record(denied)).toEqual({ tripped: 'policy_denied' });
    expect(counter.denialCount(denied)).toBe(3);
  });

  it('keys on reason_code and arguments: different denials do not add up', () => {
    const counter = new BreakerCounter();
    const deny = (c: BreakerCall, reasonCode: string) => counter.record({ ...c, outcomeStatus: 'denied', reasonCode });
    expect(deny(SEARCH, 'policy.rule.denied').tripped).toBeNull();
    expect(deny(SEARCH, 'policy.rule.denied').tripped).toBeNull();
    expect(deny(SEARCH, 'policy.scope.missing').tripped).toBeNull();
    expect(deny(OTHER, 'policy.rule.denied').tripped).toBeNull();
    expect(deny(call('web.fetch', { q: 'veetbot' }), 'policy.rule.denied').tripped).toBeNull();
    expect(deny(SEARCH, 'policy.rule.denied').tripped).toBe('policy_denied');
  });

  it('only denied outcomes count as denials', () => {
    const counter = new BreakerCounter();
    for (let i = 0; i < 3; i++) {
      expect(counter.record({ ...SEARCH, outcomeStatus: 'failed', reasonCode: 'tool.timeout' }).tripped).toBeNull();
    }
  });
});

describe('identical calls without new evidence', () => {
  it('four calls run, the fifth is loop_detected before dispatch', () => {
    const counter = new BreakerCounter();
    for (let i = 1; i <= 4; i++) {
      expect(observe(counter, SEARCH)).toBe('ok');
      expect(counter.callCount(SEARCH)).toBe(i);
    }
    expect(counter.peek(SEARCH).verdict).toBe('loop_detected');
    expect(counter.callCount(SEARCH)).toBe(4); // peek does not count
    expect(counter.check(SEARCH).verdict).toBe('loop_detected');
    expect(counter.check(OTHER).verdict).toBe('ok');
  });

  it('counts before dispatch, so a batch of five identical calls trips on its fifth member', () => {
    const counter = new BreakerCounter();
    const verdicts = Array.from({ length: 5 }, () => counter.check(SEARCH).verdict);
    expect(verdicts).toEqual(['ok', 'ok', 'ok', 'ok', 'loop_detected']);
  });

  it('counts every outcome: failures and results without a key keep counting', () => {
    const counter = new BreakerCounter();
    counter.check(SEARCH);
    counter.record({ ...SEARCH, outcomeStatus: 'failed', reasonCode: 'tool.timeout' });
    counter.check(SEARCH);
    counter.record({ ...SEARCH, outcomeStatus: 'succeeded', reasonCode: 'tool.ok' });
    counter.check(SEARCH);
    counter.record({ ...SEARCH, outcomeStatus: 'unavailable', reasonCode: 'tool.server_unreachable' });
    expect(observe(counter, SEARCH)).toBe('ok');
    expect(observe(counter, SEARCH)).toBe('loop_detected');
  });
});

describe('identical uncertain proposals', () => {
  it('one uncertain outcome denies every identical proposal after it, ahead of the loop rule', () => {
    const counter = new BreakerCounter();
    expect(counter.check(SEARCH).verdict).toBe('ok');
    counter.record({ ...SEARCH, outcomeStatus: 'uncertain', reasonCode: 'tool.outcome_unknown' });
    expect(counter.peek(SEARCH).verdict).toBe('uncertain_repeat');
    for (let i = 0; i < 6; i++) expect(counter.check(SEARCH).verdict).toBe('uncertain_repeat');
    expect(counter.check(OTHER).verdict).toBe('ok');
    // Even new evidence never clears it.
    counter.record({ ...SEARCH, outcomeStatus: 'succeeded', reasonCode: 'tool.ok', evidenceKey: 'fresh' });
    expect(counter.check(SEARCH).verdict).toBe('uncertain_repeat');
  });

  it('a denial of the repeat counts toward ToolPolicyDenied like any identical denial', () => {
    const counter = new BreakerCounter();
    counter.check(SEARCH);
    counter.record({ ...SEARCH, outcomeStatus: 'uncertain', reasonCode: 'tool.outcome_unknown' });
    const repeat = { ...SEARCH, outcomeStatus: 'denied' as const, reasonCode: BREAKER_REASON_CODES.uncertainRepeat };
    const tripped = [1, 2, 3].map(() => {
      expect(counter.check(SEARCH).verdict).toBe('uncertain_repeat');
      return counter.record(repeat).tripped;
    });
    expect(tripped).toEqual([null, null, 'policy_denied']);
  });
});

describe('new evidence', () => {
  it('a different key restarts the count at one; the same key keeps counting', () => {
    const counter = new BreakerCounter();
    expect(observe(counter, PAGE, 'k1')).toBe('ok');
    expect(observe(counter, PAGE, 'k1')).toBe('ok');
    expect(observe(counter, PAGE, 'k1')).toBe('ok');
    expect(counter.callCount(PAGE)).toBe(3);
    expect(observe(counter, PAGE, 'k2')).toBe('ok');
    expect(counter.callCount(PAGE)).toBe(1);
    expect(counter.restartsUsed()).toBe(1);
    // Same page four more times: the fifth identical call since the restart is a loop.
    expect(observe(counter, PAGE, 'k2')).toBe('ok');
    expect(observe(counter, PAGE, 'k2')).toBe('ok');
    expect(observe(counter, PAGE, 'k2')).toBe('ok');
    expect(observe(counter, PAGE, 'k2')).toBe('loop_detected');
  });

  it('a result without a key keeps counting and does not forget the last key', () => {
    const counter = new BreakerCounter();
    observe(counter, PAGE, 'k1');
    observe(counter, PAGE);
    observe(counter, PAGE);
    expect(counter.callCount(PAGE)).toBe(3);
    observe(counter, PAGE, 'k1'); // same as the last recorded key
    expect(counter.callCount(PAGE)).toBe(4);
  });

  it('evidence on a failed result is ignored', () => {
    const counter = new BreakerCounter();
    observe(counter, PAGE, 'k1');
    counter.check(PAGE);
    counter.record({ ...PAGE, outcomeStatus: 'failed', reasonCode: 'tool.timeout', evidenceKey: 'k2' });
    expect(counter.callCount(PAGE)).toBe(2);
    expect(counter.restartsUsed()).toBe(0);
  });

  it('a page that changes on every observation allows at most 36 identical observations', () => {
    const counter = new BreakerCounter();
    let allowed = 0;
    for (let i = 0; i < 100; i++) {
      if (observe(counter, PAGE, `page-${i}`) !== 'ok') break;
      allowed += 1;
    }
    expect(allowed).toBe(36);
    expect(counter.restartsUsed()).toBe(EVIDENCE_RESTART_CAP);
  });

  it('the cap is per run across all calls', () => {
    const counter = new BreakerCounter();
    // Spend 32 restarts on one call...
    for (let i = 0; i < 33; i++) observe(counter, PAGE, `a-${i}`);
    expect(counter.restartsUsed()).toBe(32);
    // ...and another call gets none: plain counting, five identical calls is a loop.
    const verdicts = Array.from({ length: 5 }, (_, i) => observe(counter, OTHER, `b-${i}`));
    expect(verdicts).toEqual(['ok', 'ok', 'ok', 'ok', 'loop_detected']);
  });

  it('a restart that does not lower a count does not consume the cap', () => {
    const counter = new BreakerCounter();
    // 40 distinct calls, each observed once with its own key: the count is 1 each time.
    for (let i = 0; i < 40; i++) observe(counter, call('browser.observe', { tab: 100 + i }), `first-${i}`);
    expect(counter.restartsUsed()).toBe(0);
    // So a changing page still gets its full 36.
    let allowed = 0;
    for (let i = 0; i < 100 && observe(counter, PAGE, `p-${i}`) === 'ok'; i++) allowed += 1;
    expect(allowed).toBe(36);
  });
});

describe('answer before the limit', () => {
  it('is synthesis-only exactly when an identical-call count sits at four', () => {
    const counter = new BreakerCounter();
    for (let i = 0; i < 3; i++) observe(counter, SEARCH);
    expect(counter.synthesisOnly()).toBe(false);
    observe(counter, SEARCH);
    expect(counter.synthesisOnly()).toBe(true);
    // Past the threshold the hard breaker has already answered; "one below" no longer holds.
    expect(counter.check(SEARCH).verdict).toBe('loop_detected');
    expect(counter.callCount(SEARCH)).toBe(5);
    expect(counter.synthesisOnly()).toBe(false);
  });

  it('is read after the evidence resets of the batch', () => {
    const counter = new BreakerCounter();
    for (let i = 0; i < 3; i++) observe(counter, PAGE, 'same');
    // The fourth call is counted before dispatch; its result shows a new page.
    expect(counter.check(PAGE).verdict).toBe('ok');
    expect(counter.synthesisOnly()).toBe(true);
    counter.record({ ...PAGE, outcomeStatus: 'succeeded', reasonCode: 'tool.ok', evidenceKey: 'changed' });
    expect(counter.synthesisOnly()).toBe(false);
  });

  it('is synthesis-only when an identical denial sits at two, not at one', () => {
    const counter = new BreakerCounter();
    const denied = { ...SEARCH, outcomeStatus: 'denied' as const, reasonCode: 'policy.rule.denied' };
    counter.record(denied);
    expect(counter.synthesisOnly()).toBe(false);
    counter.record(denied);
    expect(counter.synthesisOnly()).toBe(true);
  });
});

describe('checkpoint', () => {
  it('round-trips through JSON with every count, key, mark and the restart budget', () => {
    const counter = new BreakerCounter();
    for (let i = 0; i < 5; i++) observe(counter, PAGE, `p-${i}`);
    observe(counter, PAGE, 'p-4');
    observe(counter, SEARCH);
    observe(counter, SEARCH);
    counter.check(OTHER);
    counter.record({ ...OTHER, outcomeStatus: 'uncertain', reasonCode: 'tool.outcome_unknown' });
    counter.record({ ...SEARCH, outcomeStatus: 'denied', reasonCode: 'policy.rule.denied' });
    counter.record({ ...SEARCH, outcomeStatus: 'denied', reasonCode: 'policy.rule.denied' });

    const wire = JSON.parse(JSON.stringify(counter)) as unknown;
    expect(BreakerState.parse(wire)).toEqual(counter.toJSON());
    const restored = BreakerCounter.fromJSON(wire);
    expect(restored.toJSON()).toEqual(counter.toJSON());
    expect(restored.restartsUsed()).toBe(4);
    expect(restored.callCount(PAGE)).toBe(2);
    expect(restored.synthesisOnly()).toBe(true);

    // The restored counter behaves as the original would.
    expect(restored.check(OTHER).verdict).toBe('uncertain_repeat');
    expect(restored.record({ ...SEARCH, outcomeStatus: 'denied', reasonCode: 'policy.rule.denied' }).tripped).toBe('policy_denied');
    observe(restored, PAGE, 'p-4');
    observe(restored, PAGE, 'p-4');
    expect(restored.check(PAGE).verdict).toBe('loop_detected');
    // Same key as last recorded before the checkpoint: no restart.
    expect(restored.restartsUsed()).toBe(4);
  });

  it('serializes equal states identically whatever the insertion order', () => {
    const a = new BreakerCounter();
    const b = new BreakerCounter();
    a.check(SEARCH);
    a.check(PAGE);
    b.check(PAGE);
    b.check(SEARCH);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
  });

  it('refuses a malformed checkpoint', () => {
    expect(() => BreakerCounter.fromJSON({ version: 1, evidence_restarts: 33, calls: [], denials: [] })).toThrow();
    expect(() => BreakerCounter.fromJSON({ version: 2, evidence_restarts: 0, calls: [], denials: [] })).toThrow();
    expect(() =>
      BreakerCounter.fromJSON({
        version: 1,
        evidence_restarts: 0,
        calls: [{ name: 'a.b', arguments_hash: 'x', count: -1, last_evidence_key: null, uncertain: false }],
        denials: [],
      }),
    ).toThrow();
  });
});

describe('typed errors', () => {
  it('carry the stable codes', () => {
    const denied = new ToolPolicyDeniedError('web.search', SEARCH.argumentsHash, 'policy.rule.denied');
    const loop = new ToolLoopDetectedError('web.search', SEARCH.argumentsHash);
    expect(VeetbotError.isInstance(denied) && denied.code).toBe('run.tool_policy_denied');
    expect(VeetbotError.isInstance(loop) && loop.code).toBe('tool.loop_detected');
    expect(denied).toMatchObject({
      name: 'ToolPolicyDeniedError',
      toolName: 'web.search',
      reasonCode: 'policy.rule.denied',
      retryable: false,
    });
    expect(loop).toMatchObject({ name: 'ToolLoopDetectedError', toolName: 'web.search', argumentsHash: SEARCH.argumentsHash });
  });
});
