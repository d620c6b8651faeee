import {
  type BreakerCall,
  type BreakerCounter,
  type BreakerEvidence,
  type BreakerEvidenceCall,
  EVIDENCE_CHECKPOINT_MAX_CALLS,
  IDENTICAL_CALL_THRESHOLD,
} from '@veetbot/domain';
import type { BreakerTallyGroup, InvocationRow } from '@veetbot/ports';
import { replayBreaker, replayGroups } from './breaker-replay';
import { chargedRows } from './orchestration/orchestration-host';

/**
 * The breaker tallies this process holds (docs/adr/0049): per run, the ledger of its rows
 * through the last step this process finished, with the fencing token of the lease it finished
 * under. Every write of an invocation row takes the run's lease, and every acquisition bumps the
 * token, so while the run still carries that token no row has changed: the next step's opening
 * skips reading the earlier steps again, and a step's cost stops growing with its run (ADR 0016's
 * "counters written with the call", kept by the one process that wrote them). Anything else — a
 * step of another process in between, a resubmitted earlier step — reads the tally from the rows.
 */
export class HeldTallies {
  readonly #runs = new Map<string, HeldTally>();
  readonly #maximumKeys: number;
  #keys = 0;

  /**
   * At most `maximumKeys` call keys across the runs held (each a few hundred bytes); the least
   * recently used runs are let go first, and a run with more keys than that is not held at all —
   * it is only a copy, and a run let go reads its tally from the rows again.
   */
  constructor(maximumKeys = 50_000) {
    this.#maximumKeys = maximumKeys;
  }

  get(tenantId: string, runId: string): HeldTally | undefined {
    const key = runKey(tenantId, runId);
    const held = this.#runs.get(key);
    if (held !== undefined) {
      this.#runs.delete(key);
      this.#runs.set(key, held);
    }
    return held;
  }

  /**
   * After step `stepNumber` finished under `fencingToken`: the ledger of the earlier steps (the
   * held one itself when the opening skipped the read — updated in place, one task per run) with
   * every row of the step added.
   */
  keep(
    tenantId: string,
    runId: string,
    held: { readonly fencingToken: number; readonly stepNumber: number },
    ledger: BreakerLedger,
    stepRows: readonly InvocationRow[],
  ): void {
    for (const { toolName, argumentsHash, status, outcomeStatus, reasonCode } of stepRows)
      ledger.add({ toolName, argumentsHash, status, outcomeStatus, reasonCode, count: 1 });
    const key = runKey(tenantId, runId);
    this.forget(tenantId, runId);
    if (ledger.keys > this.#maximumKeys) return;
    this.#runs.set(key, { fencingToken: held.fencingToken, throughStep: held.stepNumber, ledger });
    this.#keys += ledger.keys;
    for (const [oldest, tally] of this.#runs) {
      if (this.#keys <= this.#maximumKeys) break;
      this.#runs.delete(oldest);
      this.#keys -= tally.ledger.keys;
    }
  }

  forget(tenantId: string, runId: string): void {
    const key = runKey(tenantId, runId);
    const held = this.#runs.get(key);
    if (held === undefined) return;
    this.#runs.delete(key);
    this.#keys -= held.ledger.keys;
  }
}

export interface HeldTally {
  readonly fencingToken: number;
  readonly throughStep: number;
  readonly ledger: BreakerLedger;
}

/**
 * A run's breaker tally by call key (tool name, arguments hash), so a step replays only what can
 * decide its verdicts: the keys of its own calls, and every key near a threshold — an identical
 * count of at least IDENTICAL_CALL_THRESHOLD − 1, or any denial. synthesisOnly() reads only counts
 * one below a threshold, and a key outside both sets has neither, so the verdicts are exactly a
 * full replay's (test/held-tallies.test.ts holds this).
 */
export class BreakerLedger {
  readonly #byKey = new Map<string, KeyGroups>();
  readonly #near = new Set<string>();
  #charged = 0;
  /** § New evidence across steps (docs/adr/0078): the run's checkpoint, by call key. */
  #evidence = new Map<string, BreakerEvidenceCall>();
  #restarts = 0;

  static of(groups: Iterable<BreakerTallyGroup>, evidence: BreakerEvidence | null = null): BreakerLedger {
    const ledger = new BreakerLedger();
    for (const group of groups) ledger.add(group);
    ledger.setEvidence(evidence);
    return ledger;
  }

  /** The run's breaker evidence as the ledger holds it (null: none yet). */
  get evidence(): BreakerEvidence | null {
    if (this.#evidence.size === 0 && this.#restarts === 0) return null;
    const calls = [...this.#evidence.values()].sort((a, b) => cmp(a.name, b.name) || cmp(a.arguments_hash, b.arguments_hash));
    return { version: 1, evidence_restarts: this.#restarts, calls };
  }

  setEvidence(evidence: BreakerEvidence | null): void {
    this.#evidence = new Map((evidence?.calls ?? []).map((c) => [callKey(c.name, c.arguments_hash), c]));
    this.#restarts = evidence?.evidence_restarts ?? 0;
  }

  /**
   * The run's evidence after a step whose calls `counter` replayed and recorded: the counter's
   * entries for the keys it holds over the ledger's, bounded as the domain bounds a checkpoint
   * (every discounted call; then this step's, then the others). Null when nothing changed, so
   * a step without an evidence key writes nothing more than before.
   */
  evidenceAfter(counter: BreakerCounter): BreakerEvidence | null {
    const fresh = counter.evidenceCheckpoint();
    const merged = new Map(this.#evidence);
    for (const entry of fresh.calls) merged.set(callKey(entry.name, entry.arguments_hash), entry);
    const freshKeys = new Set(fresh.calls.map((c) => callKey(c.name, c.arguments_hash)));
    const all = [...merged.entries()];
    const discounted = all.filter(([, c]) => c.discounted > 0);
    const others = [
      ...all.filter(([k, c]) => c.discounted === 0 && freshKeys.has(k)),
      ...all.filter(([k, c]) => c.discounted === 0 && !freshKeys.has(k)),
    ];
    const kept = [...discounted, ...others.slice(0, EVIDENCE_CHECKPOINT_MAX_CALLS)].map(([, c]) => c);
    const next: BreakerEvidence = {
      version: 1,
      evidence_restarts: Math.max(this.#restarts, fresh.evidence_restarts),
      calls: kept.sort((a, b) => cmp(a.name, b.name) || cmp(a.arguments_hash, b.arguments_hash)),
    };
    return JSON.stringify(next) === JSON.stringify(this.evidence ?? { version: 1, evidence_restarts: 0, calls: [] }) ? null : next;
  }

  /** Rows charged to the run's tool-call budget (orchestration-host.ts, chargedRows). */
  get charged(): number {
    return this.#charged;
  }

  /** Distinct call keys held. */
  get keys(): number {
    return this.#byKey.size;
  }

  add(group: BreakerTallyGroup): void {
    const key = callKey(group.toolName, group.argumentsHash);
    let groups = this.#byKey.get(key);
    if (groups === undefined) {
      groups = { calls: 0, byOutcome: [] };
      this.#byKey.set(key, groups);
    }
    // A key has one or a few outcomes: a short list costs less than a map per key.
    const at = groups.byOutcome.findIndex(
      (g) => g.status === group.status && g.outcomeStatus === group.outcomeStatus && g.reasonCode === group.reasonCode,
    );
    const seen = at === -1 ? undefined : groups.byOutcome[at];
    const merged: BreakerTallyGroup = {
      toolName: group.toolName,
      argumentsHash: group.argumentsHash,
      status: group.status,
      outcomeStatus: group.outcomeStatus,
      reasonCode: group.reasonCode,
      count: (seen?.count ?? 0) + group.count,
    };
    if (at === -1) groups.byOutcome.push(merged);
    else groups.byOutcome[at] = merged;
    groups.calls += group.count;
    // Near stays near: counts only grow, and a denial is never taken back.
    if (group.outcomeStatus === 'denied' || groups.calls >= IDENTICAL_CALL_THRESHOLD - 1) this.#near.add(key);
    this.#charged += chargedRows([group]);
  }

  /**
   * The breaker as a full replay of the ledger would decide for `keys` (the step's calls); more
   * keys may be brought in before they are recorded (`include`).
   */
  counter(keys: Iterable<BreakerCall>): LedgerCounter {
    const replayed = new Set<string>();
    const groups: BreakerTallyGroup[] = [];
    const take = (key: string): void => {
      if (replayed.has(key)) return;
      replayed.add(key);
      const found = this.#byKey.get(key);
      if (found !== undefined) groups.push(...found.byOutcome);
    };
    for (const key of this.#near) take(key);
    for (const call of keys) take(callKey(call.name, call.argumentsHash));
    const counter = replayBreaker(groups);
    // The evidence restarts the rows cannot say (docs/adr/0078), for the keys replayed.
    counter.applyEvidenceRestarts(this.#restarts);
    for (const key of replayed) {
      const entry = this.#evidence.get(key);
      if (entry !== undefined) counter.applyEvidence(entry);
    }
    return {
      counter,
      include: (call) => {
        const key = callKey(call.name, call.argumentsHash);
        if (replayed.has(key)) return;
        const before = groups.length;
        take(key);
        replayGroups(counter, groups.slice(before));
        const entry = this.#evidence.get(key);
        if (entry !== undefined) counter.applyEvidence(entry);
      },
    };
  }
}

export interface LedgerCounter {
  readonly counter: BreakerCounter;
  /** Replay `call`'s groups into the counter first, if they are not in it yet. */
  include(call: BreakerCall): void;
}

interface KeyGroups {
  calls: number;
  readonly byOutcome: BreakerTallyGroup[];
}

// NUL cannot occur in a tool name, a hex hash, a status or a reason code: keys cannot collide.
const runKey = (tenantId: string, runId: string): string => `${tenantId}\0${runId}`;
const callKey = (name: string, hash: string): string => `${name}\0${hash}`;
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
