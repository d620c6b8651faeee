import { InvalidTransitionError, StoreError } from '@veetbot/domain';
import type { InvocationRow, ReconcileAnswer, ReconcileOutcome, Reconciler, ReviewResolution, WorkspaceFiles } from '@veetbot/ports';
import type { RuntimeCore } from './runtime-core';

export interface ReconcileReport {
  /** Unreviewed UNCERTAIN rows of reconcilable tools that were due. */
  readonly examined: number;
  /** Settled by a definite answer (applied → review `succeeded`; not_applied → `not_applied`). */
  readonly settled: number;
  /** Answered `unknown`: left to a person, not tried again. */
  readonly unknown: number;
  /** The attempt threw or timed out: retried later with backoff, or left to a person once spent. */
  readonly errors: number;
  /** A person (or another worker) resolved it first, or the row could not be read. */
  readonly skipped: number;
}

const RESOLUTION: Record<'applied' | 'not_applied', ReviewResolution> = { applied: 'succeeded', not_applied: 'not_applied' };

/** Evidence is operator-facing and stored in a TEXT column: bounded. */
const EVIDENCE_MAX = 1_000;
const bounded = (text: string) => (text.length > EVIDENCE_MAX ? `${text.slice(0, EVIDENCE_MAX - 1)}…` : text);

class ReconcileTimeout extends Error {}

/**
 * docs/adr/0063, § The recovery table's "UNCERTAIN; human review" made a fact where one can be
 * read: each due, unreviewed UNCERTAIN row of a tool with a reconciler is offered to it once per
 * pass. A definite answer is written where a person's resolution goes (the review, reviewed_by
 * `reconciler:<name>`, the evidence as its note, the same event); `unknown` is recorded and left
 * to a person; a throw or a timeout is retried with doubling backoff until
 * reconcileMaximumAttempts, then left to a person. The attempt count lives in
 * invocation_reconciliations, so a restarted worker resumes it. Nothing is ever re-executed.
 */
export async function reconcileUncertain(core: RuntimeCore): Promise<ReconcileReport | undefined> {
  const reconcilers = core.deps.reconcilers;
  if (reconcilers === undefined) return undefined;
  const { stores, clock } = core.deps;
  const report = { examined: 0, settled: 0, unknown: 0, errors: 0, skipped: 0 };
  const rows = await stores.reconciliations.findDue(clock.now(), reconcilers.toolNames(), core.settings.sweepBatchSize);
  report.examined = rows.length;
  for (const row of rows) {
    const reconciler = reconcilers.forTool(row.toolName, row.toolVersion);
    if (reconciler === null || row.effectSentAt === null) {
      report.skipped += 1;
      continue;
    }
    try {
      const outcome = await attempt(core, reconciler, row);
      if (outcome === 'applied' || outcome === 'not_applied') report.settled += 1;
      else if (outcome === 'unknown') report.unknown += 1;
      else if (outcome === 'error') report.errors += 1;
      else report.skipped += 1;
    } catch {
      // The store failed: nothing was recorded, so the row is due again next pass.
      report.skipped += 1;
    }
  }
  return report;
}

async function attempt(core: RuntimeCore, reconciler: Reconciler, row: InvocationRow): Promise<ReconcileOutcome | 'error' | 'raced'> {
  const { stores, clock, metrics } = core.deps;
  const { reconcileMaximumAttempts: maximum, reconcileBackoffMs: backoff, reconcileTimeoutMs: timeout } = core.settings;
  const prior = await stores.reconciliations.get(row.tenantId, row.id);
  const attempts = (prior?.attempts ?? 0) + 1;
  const asked = await ask(core, reconciler, row, timeout);
  const answer = 'failure' in asked ? null : asked;
  const at = clock.now();
  const outcome = answer === null ? 'error' : answer.outcome;
  metrics?.recordReconciliation?.({ name: reconciler.name, outcome });
  const state = {
    invocationId: row.id,
    reconciler: reconciler.name,
    attempts,
    lastOutcome: outcome,
    at,
  } as const;
  if (answer === null || answer.outcome === 'unknown') {
    // unknown is the reconciler's considered answer: asking again sees the same thing. An error
    // may be transient: due again after backoff · 2^(attempts − 1), until the attempts are spent.
    const retry = answer === null && attempts < maximum;
    await stores.reconciliations.recordAttempt(row.tenantId, {
      ...state,
      nextAttemptAt: retry ? new Date(at.getTime() + backoff * 2 ** (attempts - 1)) : null,
      lastEvidence: bounded('failure' in asked ? asked.failure : asked.evidence),
    });
    return outcome;
  }
  const reviewedBy = `reconciler:${reconciler.name}`;
  const resolution = RESOLUTION[answer.outcome];
  try {
    await stores.reconciliations.settle(
      row.tenantId,
      { invocationId: row.id, resolution, note: bounded(answer.evidence), reviewedBy, reviewedAt: at },
      { ...state, nextAttemptAt: null, lastEvidence: bounded(answer.evidence) },
      [
        {
          runId: row.runId,
          // The event a person's resolution writes (apps/api invocations route), with the same
          // derivation key: one resolution per invocation, whoever made it.
          type: 'review.uncertain.resolved',
          payload: {
            invocation_id: row.id,
            run_id: row.runId,
            step_number: row.stepNumber,
            call_id: row.callId,
            tool_name: row.toolName,
            resolution,
            reviewed_by: reviewedBy,
          },
          derivationKey: `review.uncertain.resolved:${row.id}`,
          createdAt: at,
        },
      ],
    );
  } catch (error) {
    if (InvalidTransitionError.isInstance(error)) return 'raced';
    throw error;
  }
  return answer.outcome;
}

/** The reconciler's answer, or why there is none: it threw, timed out or answered out of contract. */
async function ask(
  core: RuntimeCore,
  reconciler: Reconciler,
  row: InvocationRow,
  timeoutMs: number,
): Promise<ReconcileAnswer | { readonly failure: string }> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let workspace: Promise<WorkspaceFiles | null> | undefined;
  try {
    const answer = await Promise.race([
      reconciler.reconcile({
        tenantId: row.tenantId,
        runId: row.runId,
        invocationId: row.id,
        toolName: row.toolName,
        toolVersion: row.toolVersion,
        idempotencyKey: row.idempotencyKey,
        arguments: row.arguments,
        watermarkAt: row.effectSentAt!,
        workspace: () => {
          workspace ??= core.deps.workspaces.forRun(row.tenantId, row.runId).then((w) => w?.files ?? null);
          return workspace;
        },
        signal: controller.signal,
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ReconcileTimeout()), timeoutMs);
      }),
    ]);
    if (
      typeof answer !== 'object' ||
      answer === null ||
      !['applied', 'not_applied', 'unknown'].includes(answer.outcome) ||
      typeof answer.evidence !== 'string'
    ) {
      return { failure: 'The reconciler answered outside its contract.' };
    }
    return answer;
  } catch (error) {
    return {
      failure:
        error instanceof ReconcileTimeout
          ? `The lookup did not answer within ${timeoutMs} ms.`
          : StoreError.isInstance(error)
            ? `The lookup failed (${error.code}).`
            : 'The lookup failed.',
    };
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}
