import { z } from 'zod';
import type { ToolOutcomeStatus } from './enums';
import { VeetbotError } from './errors';

/**
 * § The circuit breakers: one counter per run, keyed on (name, normalized_arguments_hash,
 * outcome_status, reason_code), at three thresholds.
 *
 *   Identical denied proposal                      3   ToolPolicyDenied, run fails
 *   Identical call with no new evidence (below)    5   ToolLoopDetected
 *   Identical uncertain proposal                   1   denied; never retried
 *
 * How the key's dimensions are used:
 * - identical calls are counted on (name, hash) across every outcome, before dispatch
 *   ("the identical-call row counts calls with the same name and arguments across the run");
 * - denials are counted on (name, hash, status = denied, reason_code);
 * - an UNCERTAIN outcome marks (name, hash, status = uncertain): one is already the threshold.
 *
 * The state is plain data and is checkpointed with the run (BreakerState), so approval and
 * crash resumption read the same counts; synthesisOnly() is derived from it, never stored.
 */

export const DENIED_PROPOSAL_THRESHOLD = 3;
export const IDENTICAL_CALL_THRESHOLD = 5;
export const UNCERTAIN_PROPOSAL_THRESHOLD = 1;
/** § New evidence: restarts are capped at 32 in a run across all calls. */
export const EVIDENCE_RESTART_CAP = 32;

export const BREAKER_REASON_CODES = {
  repeatedDenial: 'policy.breaker.repeated_denial',
  uncertainRepeat: 'policy.breaker.uncertain_repeat',
  loopDetected: 'tool.loop_detected',
} as const;

/** Three identical denied proposals: the run fails (§ The circuit breakers). */
export class ToolPolicyDeniedError extends VeetbotError {
  readonly toolName: string;
  readonly argumentsHash: string;
  readonly reasonCode: string;
  constructor(toolName: string, argumentsHash: string, reasonCode: string) {
    super('run.tool_policy_denied', `An identical proposal was denied ${DENIED_PROPOSAL_THRESHOLD} times; the run is stopped.`);
    this.toolName = toolName;
    this.argumentsHash = argumentsHash;
    this.reasonCode = reasonCode;
  }
}

/** An identical call repeated without new evidence (§ The circuit breakers; ADR-0136). */
export class ToolLoopDetectedError extends VeetbotError {
  readonly toolName: string;
  readonly argumentsHash: string;
  constructor(toolName: string, argumentsHash: string) {
    super('tool.loop_detected', 'This identical call was repeated without new results.');
    this.toolName = toolName;
    this.argumentsHash = argumentsHash;
  }
}

const CallRow = z
  .object({
    name: z.string().min(1),
    arguments_hash: z.string().min(1),
    /** Identical calls since the last evidence restart. */
    count: z.number().int().nonnegative(),
    /**
     * The evidence key last recorded for this call. A platform digest, kept only in this
     * checkpoint so a resumed run compares against the same key; never model-visible and
     * never stored with the result.
     */
    last_evidence_key: z.string().nullable(),
    /** An outcome of this call resolved UNCERTAIN. */
    uncertain: z.boolean(),
    /** Identical calls the evidence restarts took off the count (so count = calls − discounted). */
    discounted: z.number().int().nonnegative().default(0),
  })
  .strict();

const DenialRow = z
  .object({
    name: z.string().min(1),
    arguments_hash: z.string().min(1),
    reason_code: z.string().min(1),
    count: z.number().int().nonnegative(),
  })
  .strict();

/** The checkpointed form. Wire spelling (snake_case): it is written to the run row. */
export const BreakerState = z
  .object({
    version: z.literal(1),
    evidence_restarts: z.number().int().min(0).max(EVIDENCE_RESTART_CAP),
    calls: z.array(CallRow),
    denials: z.array(DenialRow),
  })
  .strict();
export type BreakerState = z.infer<typeof BreakerState>;

/**
 * At most this many keyed calls are kept in a run's evidence checkpoint. Every call with a
 * discount is kept (at most EVIDENCE_RESTART_CAP of them: each restart discounts one call);
 * beyond the cap the least recently keyed calls lose their last key, which can only let one
 * more restart happen for them — and restarts stay capped at 32 a run.
 */
export const EVIDENCE_CHECKPOINT_MAX_CALLS = 1_024;

/**
 * § New evidence, across steps (docs/adr/0078): what the invocation rows cannot say. The
 * replay counts a run's identical calls from its rows; this checkpoint says how many of them
 * the evidence restarts took off each count, which key each call last returned, and how many
 * restarts the run has spent. A platform digest, never model-visible, never stored with a
 * result: it is kept on the run row (`runs.breaker_evidence`), written with the step's finish.
 */
export const BreakerEvidence = z
  .object({
    version: z.literal(1),
    evidence_restarts: z.number().int().min(0).max(EVIDENCE_RESTART_CAP),
    calls: z
      .array(
        z
          .object({
            name: z.string().min(1).max(512),
            arguments_hash: z.string().min(1).max(128),
            discounted: z.number().int().nonnegative(),
            last_evidence_key: z.string().min(1).max(128).nullable(),
          })
          .strict(),
      )
      .max(EVIDENCE_CHECKPOINT_MAX_CALLS + EVIDENCE_RESTART_CAP),
  })
  .strict();
export type BreakerEvidence = z.infer<typeof BreakerEvidence>;
export type BreakerEvidenceCall = BreakerEvidence['calls'][number];

export interface BreakerCall {
  readonly name: string;
  readonly argumentsHash: string;
}

export interface BreakerOutcome extends BreakerCall {
  readonly outcomeStatus: ToolOutcomeStatus;
  readonly reasonCode: string;
  /** From a successful ToolResult only; ignored on any other status. */
  readonly evidenceKey?: string | null;
}

export type BreakerVerdict = { readonly verdict: 'ok' } | { readonly verdict: 'uncertain_repeat' } | { readonly verdict: 'loop_detected' };

export interface BreakerRecordResult {
  readonly tripped: null | 'policy_denied';
}

interface MutableCallRow {
  count: number;
  lastEvidenceKey: string | null;
  uncertain: boolean;
  discounted: number;
  /** When its key was last recorded (a counter-local sequence): the checkpoint keeps the latest. */
  keyedAt: number;
}

// NUL cannot occur in a tool name or a hex hash, so joined keys cannot collide.
const callKey = (name: string, hash: string): string => `${name}\0${hash}`;
const denialKey = (name: string, hash: string, reasonCode: string): string => `${name}\0${hash}\0${reasonCode}`;

export class BreakerCounter {
  private readonly calls = new Map<string, MutableCallRow & { name: string; hash: string }>();
  private keyed = 0;
  private readonly denials = new Map<string, { name: string; hash: string; reasonCode: string; count: number }>();
  private evidenceRestarts = 0;

  /**
   * BEFORE dispatch: count this proposal as an identical call and say whether it may run.
   * The count is taken here, not after the outcome, so a batch of five identical calls trips
   * on its fifth member even though none has finished ("the existing hard breaker still rejects
   * a batch that already reaches the threshold"). A call refused here is still counted.
   *
   * - uncertain_repeat: an identical call resolved UNCERTAIN; deny with
   *   policy.breaker.uncertain_repeat, never retried. Checked first: it is a safety rule.
   * - loop_detected: this is the fifth identical call since the last evidence restart; fail
   *   with tool.loop_detected before dispatch.
   */
  check(call: BreakerCall): BreakerVerdict {
    const row = this.callRow(call);
    row.count += 1;
    if (row.uncertain) return { verdict: 'uncertain_repeat' };
    if (row.count >= IDENTICAL_CALL_THRESHOLD) return { verdict: 'loop_detected' };
    return { verdict: 'ok' };
  }

  /** The verdict check() would give, without counting. */
  peek(call: BreakerCall): BreakerVerdict {
    const row = this.calls.get(callKey(call.name, call.argumentsHash));
    if (row?.uncertain) return { verdict: 'uncertain_repeat' };
    if ((row?.count ?? 0) + 1 >= IDENTICAL_CALL_THRESHOLD) return { verdict: 'loop_detected' };
    return { verdict: 'ok' };
  }

  /**
   * AFTER the outcome: apply it.
   * - denied: count the identical denied proposal; the third trips ToolPolicyDenied.
   * - uncertain: mark the call; any identical proposal is denied from now on.
   * - succeeded with an evidence key different from the one last recorded for this call
   *   (§ New evidence): the count restarts at one, if the restart lowers it and fewer than 32
   *   restarts have been spent in the run. A result without a key keeps counting.
   */
  record(outcome: BreakerOutcome): BreakerRecordResult {
    const { name, argumentsHash, outcomeStatus, reasonCode } = outcome;
    if (outcomeStatus === 'uncertain') this.callRow(outcome).uncertain = true;

    if (outcomeStatus === 'succeeded' && outcome.evidenceKey !== undefined && outcome.evidenceKey !== null) {
      const row = this.callRow(outcome);
      if (row.lastEvidenceKey !== outcome.evidenceKey) {
        // A restart is spent only when it lowers the count; after the cap the plain count applies.
        if (row.count > 1 && this.evidenceRestarts < EVIDENCE_RESTART_CAP) {
          row.discounted += row.count - 1;
          row.count = 1;
          this.evidenceRestarts += 1;
        }
        row.lastEvidenceKey = outcome.evidenceKey;
        row.keyedAt = ++this.keyed;
      }
    }

    if (outcomeStatus === 'denied' && this.countDenials(name, argumentsHash, reasonCode, 1) >= DENIED_PROPOSAL_THRESHOLD)
      return { tripped: 'policy_denied' };
    return { tripped: null };
  }

  /**
   * Replay `times` identical recorded calls at once: what `times` checks of `call` and, with an
   * outcome, `times` records of it would leave, without the verdicts. Stored outcomes carry no
   * evidence key, so only uncertain (the mark) and denied (the count) change the state; the
   * evidence restarts come back from the run's checkpoint (applyEvidence, docs/adr/0078).
   */
  replay(call: BreakerCall, outcome: Pick<BreakerOutcome, 'outcomeStatus' | 'reasonCode'> | null, times: number): void {
    const row = this.callRow(call);
    row.count += times;
    if (outcome?.outcomeStatus === 'uncertain') row.uncertain = true;
    if (outcome?.outcomeStatus === 'denied') this.countDenials(call.name, call.argumentsHash, outcome.reasonCode, times);
  }

  /**
   * § Answer before the limit (ADR-0136): after a completed batch (and its evidence resets),
   * if any count sits exactly one below its threshold — an identical call at 4 of 5, or an
   * identical denial at 2 of 3 — the next model turn is synthesis-only. The uncertain row's
   * threshold is 1, so it has no "one below" and never triggers this.
   */
  synthesisOnly(): boolean {
    for (const row of this.calls.values()) if (row.count === IDENTICAL_CALL_THRESHOLD - 1) return true;
    for (const row of this.denials.values()) if (row.count === DENIED_PROPOSAL_THRESHOLD - 1) return true;
    return false;
  }

  /** The current identical-call count for (name, hash). */
  callCount(call: BreakerCall): number {
    return this.calls.get(callKey(call.name, call.argumentsHash))?.count ?? 0;
  }

  /** The identical-denial count for (name, hash, reason_code). */
  denialCount(call: BreakerCall & { readonly reasonCode: string }): number {
    return this.denials.get(denialKey(call.name, call.argumentsHash, call.reasonCode))?.count ?? 0;
  }

  /** Evidence restarts spent in this run. */
  restartsUsed(): number {
    return this.evidenceRestarts;
  }

  /**
   * The evidence part of the state (docs/adr/0078), for the calls `only` names (all when
   * absent): what a replay of the rows cannot reproduce. Bounded: every discounted call, and the
   * EVIDENCE_CHECKPOINT_MAX_CALLS most recently keyed others.
   */
  evidenceCheckpoint(only?: (call: BreakerCall) => boolean): BreakerEvidence {
    const kept = [...this.calls.values()].filter(
      (r) => (r.discounted > 0 || r.lastEvidenceKey !== null) && (only === undefined || only({ name: r.name, argumentsHash: r.hash })),
    );
    const discounted = kept.filter((r) => r.discounted > 0);
    const keyedOnly = kept
      .filter((r) => r.discounted === 0)
      .sort((a, b) => b.keyedAt - a.keyedAt)
      .slice(0, EVIDENCE_CHECKPOINT_MAX_CALLS);
    const calls = [...discounted, ...keyedOnly]
      .map((r) => ({ name: r.name, arguments_hash: r.hash, discounted: r.discounted, last_evidence_key: r.lastEvidenceKey }))
      .sort((a, b) => cmp(a.name, b.name) || cmp(a.arguments_hash, b.arguments_hash));
    return { version: 1, evidence_restarts: this.evidenceRestarts, calls };
  }

  /**
   * After the rows of `call` were replayed (`replay`): take off what the evidence restarts
   * discounted and restore its last key. A count never goes below zero (a resubmitted step's
   * own calls were discounted in the checkpoint but are counted again only when checked).
   */
  applyEvidence(entry: BreakerEvidenceCall): void {
    const row = this.callRow({ name: entry.name, argumentsHash: entry.arguments_hash });
    row.count = Math.max(0, row.count - entry.discounted);
    row.discounted = entry.discounted;
    if (entry.last_evidence_key !== null) {
      row.lastEvidenceKey = entry.last_evidence_key;
      row.keyedAt = ++this.keyed;
    }
  }

  /** The run's restarts spent, from its checkpoint (docs/adr/0078). */
  applyEvidenceRestarts(restarts: number): void {
    this.evidenceRestarts = Math.min(EVIDENCE_RESTART_CAP, Math.max(this.evidenceRestarts, restarts));
  }

  /** The checkpoint: rows sorted so equal states serialize identically. */
  toJSON(): BreakerState {
    const calls = [...this.calls.values()]
      .map((r) => ({
        name: r.name,
        arguments_hash: r.hash,
        count: r.count,
        last_evidence_key: r.lastEvidenceKey,
        uncertain: r.uncertain,
        discounted: r.discounted,
      }))
      .sort((a, b) => cmp(a.name, b.name) || cmp(a.arguments_hash, b.arguments_hash));
    const denials = [...this.denials.values()]
      .map((r) => ({ name: r.name, arguments_hash: r.hash, reason_code: r.reasonCode, count: r.count }))
      .sort((a, b) => cmp(a.name, b.name) || cmp(a.arguments_hash, b.arguments_hash) || cmp(a.reason_code, b.reason_code));
    return { version: 1, evidence_restarts: this.evidenceRestarts, calls, denials };
  }

  /** Restore a checkpoint; a malformed one is a zod error, never a silently empty counter. */
  static fromJSON(value: unknown): BreakerCounter {
    const state = BreakerState.parse(value);
    const counter = new BreakerCounter();
    counter.evidenceRestarts = state.evidence_restarts;
    for (const r of state.calls) {
      counter.calls.set(callKey(r.name, r.arguments_hash), {
        name: r.name,
        hash: r.arguments_hash,
        count: r.count,
        lastEvidenceKey: r.last_evidence_key,
        uncertain: r.uncertain,
        discounted: r.discounted,
        keyedAt: r.last_evidence_key === null ? 0 : ++counter.keyed,
      });
    }
    for (const r of state.denials) {
      counter.denials.set(denialKey(r.name, r.arguments_hash, r.reason_code), {
        name: r.name,
        hash: r.arguments_hash,
        reasonCode: r.reason_code,
        count: r.count,
      });
    }
    return counter;
  }

  /** Add `times` identical denials of (name, hash, reason_code); the new count. */
  private countDenials(name: string, hash: string, reasonCode: string, times: number): number {
    const key = denialKey(name, hash, reasonCode);
    const row = this.denials.get(key) ?? { name, hash, reasonCode, count: 0 };
    row.count += times;
    this.denials.set(key, row);
    return row.count;
  }

  private callRow(call: BreakerCall): MutableCallRow {
    const key = callKey(call.name, call.argumentsHash);
    let row = this.calls.get(key);
    if (!row) {
      row = { name: call.name, hash: call.argumentsHash, count: 0, lastEvidenceKey: null, uncertain: false, discounted: 0, keyedAt: 0 };
      this.calls.set(key, row);
    }
    return row;
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
