import { isTerminalInvocationStatus } from '@veetbot/domain';
import type { ApprovalStore, InvocationRow } from '@veetbot/ports';
import { isSuspended } from './suspension';

/**
 * Which row is a call's outcome (docs/adr/0028): of a step's rows, one per call id — the first
 * terminal row in the order given, else the first row. A call normally has one row; two exist
 * when a resubmission's steps 1–5 refused a call that had started, since such a refusal is
 * recorded under a key of its own (recovery-endings.ts) — then the terminal one is the outcome.
 */
export function outcomeRowsByCall(rows: readonly InvocationRow[]): Map<string, InvocationRow> {
  const byCall = new Map<string, InvocationRow>();
  for (const row of rows) {
    const seen = byCall.get(row.callId);
    if (seen === undefined || (!isTerminalInvocationStatus(seen.status) && isTerminalInvocationStatus(row.status)))
      byCall.set(row.callId, row);
  }
  return byCall;
}

/** § Parallel calls: a step has ended when every one of its calls has a terminal row. */
export function everyCallConcluded(callIds: Iterable<string>, byCall: ReadonlyMap<string, InvocationRow>): boolean {
  for (const callId of callIds) {
    const row = byCall.get(callId);
    if (row === undefined || !isTerminalInvocationStatus(row.status)) return false;
  }
  return true;
}

/** A step as its rows say it stands, for a reader that did not run it (the api). */
export interface StepReading {
  /**
   * running: a call is still to run or re-run; suspended: no call runs, and some call waits
   * for its user's answer or a child run (§ Control tools); waiting_for_approval: only
   * people's decisions are awaited.
   */
  readonly status: 'running' | 'suspended' | 'waiting_for_approval' | 'completed';
  /** The terminal outcome row of each concluded call, in the order of the calls. */
  readonly concluded: readonly InvocationRow[];
  /** Calls waiting for a person, in the order of the calls. */
  readonly waiting: readonly { readonly callId: string; readonly row: InvocationRow; readonly approvalId: string | null }[];
  /** Calls suspended on a question or a child run, in the order of the calls. */
  readonly suspended: readonly { readonly callId: string; readonly row: InvocationRow }[];
}

/**
 * Read a step from its rows (the worker that ran it may be another process). A call whose row
 * is WAITING_FOR_APPROVAL waits for a person while its approval is pending (or missing); once
 * decided but not yet re-run by a worker it is running again. A call with no row, or a
 * non-terminal one, is running.
 */
export async function readStep(
  approvals: Pick<ApprovalStore, 'getByInvocation'>,
  tenantId: string,
  callIds: readonly string[],
  rows: readonly InvocationRow[],
): Promise<StepReading> {
  const byCall = outcomeRowsByCall(rows);
  const concluded: InvocationRow[] = [];
  const waiting: { callId: string; row: InvocationRow; approvalId: string | null }[] = [];
  const suspended: { callId: string; row: InvocationRow }[] = [];
  let running = false;
  for (const callId of callIds) {
    const row = byCall.get(callId);
    if (row !== undefined && isTerminalInvocationStatus(row.status)) {
      concluded.push(row);
    } else if (row?.status === 'waiting_for_approval') {
      const approval = await approvals.getByInvocation(tenantId, row.id);
      if (approval !== null && approval.status !== 'pending') running = true;
      else waiting.push({ callId, row, approvalId: approval?.id ?? null });
    } else if (row !== undefined && isSuspended(row)) {
      suspended.push({ callId, row });
    } else {
      running = true;
    }
  }
  const status = running ? 'running' : suspended.length > 0 ? 'suspended' : waiting.length > 0 ? 'waiting_for_approval' : 'completed';
  return { status, concluded, waiting, suspended };
}
