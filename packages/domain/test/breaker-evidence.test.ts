import { describe, expect, it } from 'vitest';
import { EVIDENCE_RESTART_CAP } from '../src/breaker';
import { argumentsHash, BreakerCounter, BreakerEvidence, EVIDENCE_CHECKPOINT_MAX_CALLS, type BreakerCall } from '../src/index';

// § New evidence across steps (docs/adr/0078): the rows give a replay its counts; the evidence
// checkpoint gives it what the rows cannot say. A fresh counter per step — replayed from the
// earlier calls and the checkpoint the last step left — must decide as one counter would.

const PAGE: BreakerCall = { name: 'web.fetch', argumentsHash: argumentsHash({ url: 'https://example.com/' }) };
const OTHER: BreakerCall = { name: 'web.fetch', argumentsHash: argumentsHash({ url: 'https://example.org/' }) };

/** A run whose every step starts from a fresh counter: rows replayed, then the checkpoint applied. */
class StepwiseRun {
  readonly #rows = new Map<string, { call: BreakerCall; count: number }>();
  #evidence: BreakerEvidence | null = null;

  /** One step with one call; the page read, or no key. Returns the verdict and synthesis-only after. */
  step(call: BreakerCall, evidenceKey: string | null): { verdict: string; synthesisOnly: boolean } {
    const counter = new BreakerCounter();
    for (const { call: c, count } of this.#rows.values()) counter.replay(c, { outcomeStatus: 'succeeded', reasonCode: 'tool.ok' }, count);
    if (this.#evidence !== null) {
      // The checkpoint went through its JSON form, as it does through the database.
      const stored = BreakerEvidence.parse(JSON.parse(JSON.stringify(this.#evidence)));
      counter.applyEvidenceRestarts(stored.evidence_restarts);
      for (const entry of stored.calls) counter.applyEvidence(entry);
    }
    const { verdict } = counter.check(call);
    const key = `${call.name}\0${call.argumentsHash}`;
    this.#rows.set(key, { call, count: (this.#rows.get(key)?.count ?? 0) + 1 });
    if (verdict === 'ok') counter.record({ ...call, outcomeStatus: 'succeeded', reasonCode: 'tool.ok', evidenceKey });
    this.#evidence = counter.evidenceCheckpoint();
    return { verdict, synthesisOnly: counter.synthesisOnly() };
  }
}

describe('evidence restarts across steps', () => {
  it('a page that changes on every observation allows at most 36 identical observations, one per step', () => {
    const run = new StepwiseRun();
    let observed = 0;
    let synthesisAt = -1;
    for (let i = 0; i < 100; i++) {
      const { verdict, synthesisOnly } = run.step(PAGE, `page-${i}`);
      if (verdict !== 'ok') break;
      observed += 1;
      if (synthesisOnly && synthesisAt === -1) synthesisAt = observed;
    }
    expect(observed).toBe(36);
    // § Answer before the limit: the turn after the 36th is synthesis-only.
    expect(synthesisAt).toBe(36);
  });

  it('five identical calls returning the same page trip the breaker, across steps', () => {
    const run = new StepwiseRun();
    const verdicts = Array.from({ length: 5 }, () => run.step(PAGE, 'same-page').verdict);
    expect(verdicts).toEqual(['ok', 'ok', 'ok', 'ok', 'loop_detected']);
  });

  it('a changed page restarts the count across steps; the same page again counts on from there', () => {
    const run = new StepwiseRun();
    for (let i = 0; i < 3; i++) expect(run.step(PAGE, 'v1').verdict).toBe('ok');
    // The fourth read shows a new page: the count restarts at one (synthesis-only is lifted).
    expect(run.step(PAGE, 'v2')).toEqual({ verdict: 'ok', synthesisOnly: false });
    // Then the same page: counts 2, 3, 4 — and the fifth identical call since the restart trips.
    const verdicts = Array.from({ length: 4 }, () => run.step(PAGE, 'v2').verdict);
    expect(verdicts).toEqual(['ok', 'ok', 'ok', 'loop_detected']);
  });

  it('the 32 restarts are per run, across calls and steps', () => {
    const run = new StepwiseRun();
    for (let i = 0; i < 33; i++) expect(run.step(PAGE, `a-${i}`).verdict).toBe('ok');
    const verdicts = Array.from({ length: 5 }, (_, i) => run.step(OTHER, `b-${i}`).verdict);
    expect(verdicts).toEqual(['ok', 'ok', 'ok', 'ok', 'loop_detected']);
  });

  it('without the checkpoint a replay counts every identical call: the strict direction', () => {
    const counter = new BreakerCounter();
    counter.replay(PAGE, { outcomeStatus: 'succeeded', reasonCode: 'tool.ok' }, 4);
    expect(counter.check(PAGE).verdict).toBe('loop_detected');
  });
});

describe('the checkpoint', () => {
  it('round-trips a counter: the replay plus the checkpoint equals the live state', () => {
    const live = new BreakerCounter();
    for (let i = 0; i < 10; i++) {
      live.check(PAGE);
      live.record({ ...PAGE, outcomeStatus: 'succeeded', reasonCode: 'tool.ok', evidenceKey: `k-${i % 3 === 0 ? i : 0}` });
    }
    const replayed = new BreakerCounter();
    replayed.replay(PAGE, { outcomeStatus: 'succeeded', reasonCode: 'tool.ok' }, 10);
    const checkpoint = live.evidenceCheckpoint();
    replayed.applyEvidenceRestarts(checkpoint.evidence_restarts);
    for (const entry of checkpoint.calls) replayed.applyEvidence(entry);
    expect(replayed.callCount(PAGE)).toBe(live.callCount(PAGE));
    expect(replayed.restartsUsed()).toBe(live.restartsUsed());
    expect(replayed.evidenceCheckpoint()).toEqual(checkpoint);
  });

  it('is bounded: every discounted call, and the most recently keyed of the rest', () => {
    const counter = new BreakerCounter();
    const calls = Array.from({ length: EVIDENCE_CHECKPOINT_MAX_CALLS + 50 }, (_, i) => ({
      name: 'web.fetch',
      argumentsHash: argumentsHash({ n: i }),
    }));
    for (const c of calls) {
      counter.check(c);
      counter.record({ ...c, outcomeStatus: 'succeeded', reasonCode: 'tool.ok', evidenceKey: 'k' });
    }
    const checkpoint = counter.evidenceCheckpoint();
    expect(checkpoint.calls).toHaveLength(EVIDENCE_CHECKPOINT_MAX_CALLS);
    expect(BreakerEvidence.safeParse(checkpoint).success).toBe(true);
    // The first 50 keyed are the ones let go.
    const kept = new Set(checkpoint.calls.map((c) => c.arguments_hash));
    expect(calls.slice(0, 50).some((c) => kept.has(c.argumentsHash))).toBe(false);
  });

  it('refuses a stored checkpoint with more restarts than the cap, or an extra field', () => {
    expect(BreakerEvidence.safeParse({ version: 1, evidence_restarts: EVIDENCE_RESTART_CAP + 1, calls: [] }).success).toBe(false);
    expect(BreakerEvidence.safeParse({ version: 1, evidence_restarts: 0, calls: [], note: 'x' }).success).toBe(false);
  });

  it('never lowers a count below zero (a resubmitted step whose calls were discounted)', () => {
    const counter = new BreakerCounter();
    counter.replay(PAGE, null, 1);
    counter.applyEvidence({ name: PAGE.name, arguments_hash: PAGE.argumentsHash, discounted: 3, last_evidence_key: 'k' });
    expect(counter.callCount(PAGE)).toBe(0);
  });
});
