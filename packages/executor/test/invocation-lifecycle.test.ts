import { describe, expect, it } from 'vitest';
import { idempotencyKey, isTerminalInvocationStatus, ToolSpec } from '@veetbot/domain';
import type {
  ApprovalRow,
  InvocationTerminal,
  InsertIntentResult,
  InvocationRow,
  InvocationStore,
  LeaseFence,
  NewEvent,
  NewInvocation,
  RunRow,
} from '@veetbot/ports';
import {
  endSuspendedOfCancelledRun,
  outcomeRowsByCall,
  readStep,
  recordRefusal,
  settleRefusedRecovery,
  type DurableDeps,
  type RefusedCall,
  type RunContext,
  type ToolCallRequest,
} from '../src';
import { holdsLiveLease, leaseIsLive } from '../src/lifecycle/lease';
import { principal } from './fixtures';

/**
 * The executor decides a row's transitions and the store performs them (docs/adr/0028). These
 * tests hold the decisions: which transition the executor asks the store for, with which
 * events. The store is a recorder of what it is asked (the real store's transitions are held by
 * packages/store-postgres/test and apps/integration-tests).
 */
const NOW = new Date('2026-11-30T00:00:00Z');
const FENCE: LeaseFence = { runId: 'r1', fencingToken: 3 };
const TERMINAL_EVENTS = new Set(['tool.call.completed', 'tool.call.failed', 'tool.call.denied', 'tool.call.uncertain']);

class RecordingInvocations {
  readonly rows = new Map<string, InvocationRow>();
  readonly inserts: { row: NewInvocation; events: readonly NewEvent[] }[] = [];
  readonly completions: { id: string; completed: InvocationTerminal; events: readonly NewEvent[] }[] = [];

  put(partial: Partial<InvocationRow> & { idempotencyKey: string }): InvocationRow {
    const row: InvocationRow = { ...baseRow(), ...partial };
    this.rows.set(row.id, row);
    return row;
  }

  async insertIntent(tenantId: string, row: NewInvocation, events: readonly NewEvent[]): Promise<InsertIntentResult> {
    this.inserts.push({ row, events });
    const existing = [...this.rows.values()].find((r) => r.idempotencyKey === row.idempotencyKey);
    if (existing !== undefined) return { inserted: false, existing };
    return { inserted: true, row: this.put({ ...baseRow(), ...row, tenantId, id: row.id ?? 'generated' }) };
  }

  async complete(
    _tenantId: string,
    id: string,
    fence: LeaseFence,
    completed: InvocationTerminal,
    events: readonly NewEvent[],
  ): Promise<InvocationRow> {
    expect(fence).toEqual(FENCE);
    const row = this.rows.get(id)!;
    expect(isTerminalInvocationStatus(row.status)).toBe(false);
    this.completions.push({ id, completed, events });
    return this.put({ ...row, ...completed, status: completed.status });
  }

  async getById(_tenantId: string, id: string): Promise<InvocationRow | null> {
    return this.rows.get(id) ?? null;
  }

  asStore(): InvocationStore {
    return new Proxy(this, {
      get: (target, name) => {
        const value = Reflect.get(target, name) as unknown;
        if (typeof value === 'function') return value.bind(target);
        throw new Error(`The lifecycle asked the store for ${String(name)}, which this test does not expect.`);
      },
    }) as unknown as InvocationStore;
  }
}

function baseRow(): InvocationRow {
  return {
    id: globalThis.crypto.randomUUID(),
    tenantId: 't1',
    runId: 'r1',
    sessionId: 's1',
    stepNumber: 1,
    callId: 'c1',
    toolName: 'demo.write',
    toolVersion: '1',
    status: 'proposed',
    idempotencyKey: 'k',
    argumentsHash: 'h',
    arguments: {},
    result: null,
    error: null,
    createdAt: NOW,
    startedAt: null,
    finishedAt: null,
    toolSource: 'builtin',
    serverId: null,
    idempotencyClass: 'non_idempotent',
    effectSentAt: null,
    attemptNumber: 1,
    suspendedKind: null,
    suspendedRef: null,
    outputBytes: null,
    truncated: false,
    artifactId: null,
    outcomeStatus: null,
    reasonCode: null,
    originTrust: 'external_untrusted',
    parallelGroup: null,
    policyVersion: null,
    policyRuleId: null,
  };
}

function runRow(partial: Partial<RunRow> = {}): RunRow {
  return {
    id: 'r1',
    tenantId: 't1',
    sessionId: 's1',
    parentRunId: null,
    status: 'running',
    deadlineAt: new Date(NOW.getTime() + 60_000),
    budgets: {},
    leaseOwner: 'worker-1',
    leaseExpiresAt: new Date(NOW.getTime() + 1),
    fencingToken: FENCE.fencingToken,
    createdAt: NOW,
    finishedAt: null,
    failureReason: null,
    result: null,
    ...partial,
  };
}

function durable(store: RecordingInvocations, run: RunRow = runRow()): DurableDeps {
  const unused = () => {
    throw new Error('not expected');
  };
  return {
    invocations: store.asStore(),
    runs: { get: async () => run } as unknown as DurableDeps['runs'],
    approvals: { getByInvocation: unused } as unknown as DurableDeps['approvals'],
    artifacts: { forScope: unused } as unknown as DurableDeps['artifacts'],
    credentials: { resolve: unused } as unknown as DurableDeps['credentials'],
    owner: 'worker-1',
    inFlight: new Set(),
    outputs: { inlineMaximumBytes: 4096 },
    maximumAttempts: 5,
  };
}

const runContext: RunContext = { fence: FENCE, deadlineAt: new Date(NOW.getTime() + 60_000), parallelGroup: null, workspace: null };

const request: ToolCallRequest = {
  tenantId: 't1',
  sessionId: 's1',
  runId: 'r1',
  stepNumber: 1,
  callId: 'c1',
  toolName: 'demo.write',
  arguments: { n: 1 },
  principal,
  contextTrust: ['user'],
} as ToolCallRequest;

const spec = ToolSpec.parse({
  name: 'demo.write',
  version: '1',
  description: 'test tool',
  input_schema: { type: 'object' },
  output_schema: null,
  side_effect: 'external_write',
  risk: 'low',
  idempotency: 'non_idempotent',
  required_scopes: [],
  timeout_seconds: 5,
  maximum_output_bytes: 4096,
  allow_parallel: false,
  output_trust: 'internal_tool',
});
const authorized = { spec, argumentsHash: 'a'.repeat(64), arguments: { n: 1 }, originTrust: 'external_untrusted' as const };
const authorizedKey = idempotencyKey({
  runId: 'r1',
  stepNumber: 1,
  callId: 'c1',
  toolName: spec.name,
  toolVersion: spec.version,
  argumentsHash: authorized.argumentsHash,
});
const refused: RefusedCall = {
  spec,
  toolName: 'demo.write',
  argumentsHash: 'b'.repeat(64),
  arguments: { n: 1 },
  originTrust: 'external_untrusted',
};
const refusedKey = idempotencyKey({
  runId: 'r1',
  stepNumber: 1,
  callId: 'c1',
  toolName: 'demo.write',
  toolVersion: '1',
  argumentsHash: refused.argumentsHash,
});
const BREAKER = { status: 'failed', reasonCode: 'tool.loop_detected' } as const;

/** Exactly one terminal event, of `type`, saying `reasonCode`. */
function expectOneTerminalEvent(events: readonly NewEvent[], type: string, reasonCode: string): void {
  const terminal = events.filter((e) => TERMINAL_EVENTS.has(e.type));
  expect(terminal).toHaveLength(1);
  expect(events).toHaveLength(1);
  expect(terminal[0]!.type).toBe(type);
  expect(terminal[0]!.payload).toMatchObject({ reason_code: reasonCode });
}

describe('the lease rule (lifecycle/lease.ts)', () => {
  it('is live strictly before lease_expires_at and expired at it, as the store SQL counts (lease_expires_at <= now)', () => {
    expect(leaseIsLive(runRow({ leaseExpiresAt: new Date(NOW.getTime() + 1) }), NOW)).toBe(true);
    expect(leaseIsLive(runRow({ leaseExpiresAt: NOW }), NOW)).toBe(false);
    expect(leaseIsLive(runRow({ leaseExpiresAt: new Date(NOW.getTime() - 1) }), NOW)).toBe(false);
    expect(leaseIsLive(runRow({ leaseExpiresAt: null }), NOW)).toBe(false);
    expect(leaseIsLive(runRow({ leaseOwner: null }), NOW)).toBe(false);
  });

  it('is held only by its owner under the current fencing token', () => {
    expect(holdsLiveLease(runRow(), 'worker-1', FENCE, NOW)).toBe(true);
    expect(holdsLiveLease(runRow(), 'worker-2', FENCE, NOW)).toBe(false);
    expect(holdsLiveLease(runRow({ fencingToken: 4 }), 'worker-1', FENCE, NOW)).toBe(false);
    expect(holdsLiveLease(runRow({ leaseExpiresAt: NOW }), 'worker-1', FENCE, NOW)).toBe(false);
    expect(holdsLiveLease(null, 'worker-1', FENCE, NOW)).toBe(false);
  });
});

describe('recordRefusal (the runtime refuses before dispatch)', () => {
  it('records an admitted call as PROPOSED with tool.call.proposed, then ends it with exactly one terminal event', async () => {
    const store = new RecordingInvocations();
    const item = await recordRefusal(durable(store), NOW, request, { authorized }, runContext, BREAKER);
    expect(item?.outcome.reason_code).toBe('tool.loop_detected');
    expect(store.inserts).toHaveLength(1);
    expect(store.inserts[0]!.row).toMatchObject({ status: 'proposed', idempotencyKey: authorizedKey });
    expect(store.inserts[0]!.events.map((e) => e.type)).toEqual(['tool.call.proposed']);
    expect(store.completions).toHaveLength(1);
    expect(store.completions[0]!.completed).toMatchObject({
      status: 'failed',
      reasonCode: 'tool.loop_detected',
      result: { content: [], structured: null, trust: 'platform' },
    });
    expectOneTerminalEvent(store.completions[0]!.events, 'tool.call.failed', 'tool.loop_detected');
  });

  it('answers null and writes nothing when a RUNNING row holds the key (only recovery may settle it)', async () => {
    const store = new RecordingInvocations();
    store.put({ idempotencyKey: authorizedKey, status: 'running' });
    expect(await recordRefusal(durable(store), NOW, request, { authorized }, runContext, BREAKER)).toBeNull();
    expect(store.completions).toHaveLength(0);
  });

  it('answers a terminal row with its recorded outcome, and ends an AUTHORIZED one with the refusal', async () => {
    const done = new RecordingInvocations();
    done.put({ idempotencyKey: authorizedKey, status: 'succeeded', reasonCode: 'tool.ok' });
    expect((await recordRefusal(durable(done), NOW, request, { authorized }, runContext, BREAKER))?.outcome.reason_code).toBe('tool.ok');
    expect(done.completions).toHaveLength(0);

    const admitted = new RecordingInvocations();
    const row = admitted.put({ idempotencyKey: authorizedKey, status: 'authorized' });
    await recordRefusal(durable(admitted), NOW, request, { authorized }, runContext, {
      status: 'denied',
      reasonCode: 'policy.breaker.uncertain_repeat',
    });
    expect(admitted.completions.map((c) => c.id)).toEqual([row.id]);
    expectOneTerminalEvent(admitted.completions[0]!.events, 'tool.call.denied', 'policy.breaker.uncertain_repeat');
  });

  it('records a call steps 1–7 refused under the key the pipeline records it by', async () => {
    const store = new RecordingInvocations();
    const item = await recordRefusal(durable(store), NOW, request, { refused }, runContext, {
      status: 'failed',
      reasonCode: 'tool.budget_exhausted',
    });
    expect(item?.outcome.reason_code).toBe('tool.budget_exhausted');
    expect(store.inserts[0]!.row).toMatchObject({ status: 'proposed', idempotencyKey: refusedKey });
    expectOneTerminalEvent(store.completions[0]!.events, 'tool.call.failed', 'tool.budget_exhausted');
  });

  it('settles an admitted row the refusal meets only under the live lease: UNCERTAIN where the effect may have escaped', async () => {
    const store = new RecordingInvocations();
    store.put({ idempotencyKey: refusedKey, status: 'running', effectSentAt: NOW });
    await recordRefusal(durable(store), NOW, request, { refused }, runContext, BREAKER);
    expectOneTerminalEvent(store.completions[0]!.events, 'tool.call.uncertain', 'tool.outcome_unknown');

    // The same row, the lease expired at this very instant: not ours to settle.
    const expired = new RecordingInvocations();
    expired.put({ idempotencyKey: refusedKey, status: 'running', effectSentAt: NOW });
    const item = await recordRefusal(durable(expired, runRow({ leaseExpiresAt: NOW })), NOW, request, { refused }, runContext, BREAKER);
    expect(item?.outcome.reason_code).toBe('tool.concurrency_conflict');
    expect(expired.completions).toHaveLength(0);
  });
});

describe('recovery endings', () => {
  const declined = { kind: 'concluded', invocationStatus: 'denied', item: { outcome: { reason_code: 'policy.scope.missing' } } } as never;

  it('ends a RUNNING row the re-check refused: UNCERTAIN with the watermark on a non-idempotent call, else the refusal', async () => {
    const store = new RecordingInvocations();
    const escaped = store.put({ idempotencyKey: 'k1', status: 'running', effectSentAt: NOW });
    const read = store.put({ idempotencyKey: 'k2', status: 'running', idempotencyClass: 'read_only', effectSentAt: NOW });
    const d = durable(store);
    expect(await settleRefusedRecovery(d, 't1', escaped, runContext, () => NOW, declined)).toBe('uncertain');
    expect(await settleRefusedRecovery(d, 't1', read, runContext, () => NOW, declined)).toBe('denied');
    expect(store.completions).toHaveLength(2);
    expectOneTerminalEvent(store.completions[0]!.events, 'tool.call.uncertain', 'tool.outcome_unknown');
    expectOneTerminalEvent(store.completions[1]!.events, 'tool.call.denied', 'policy.scope.missing');
  });

  it('leaves a suspended or already ended row as it is', async () => {
    const store = new RecordingInvocations();
    const suspended = store.put({ idempotencyKey: 'k1', status: 'running', suspendedKind: 'user_input' });
    const ended = store.put({ idempotencyKey: 'k2', status: 'failed' });
    expect(await settleRefusedRecovery(durable(store), 't1', suspended, runContext, () => NOW, declined)).toBe('running');
    expect(await settleRefusedRecovery(durable(store), 't1', ended, runContext, () => NOW, declined)).toBe('failed');
    expect(store.completions).toHaveLength(0);
  });

  it('ends each suspended call of a cancelled run FAILED tool.run_cancelled, one terminal event each, and nothing else', async () => {
    const store = new RecordingInvocations();
    const a = store.put({ idempotencyKey: 'k1', status: 'running', suspendedKind: 'user_input' });
    const b = store.put({ idempotencyKey: 'k2', status: 'running', suspendedKind: 'child_run' });
    const live = store.put({ idempotencyKey: 'k3', status: 'running' });
    await endSuspendedOfCancelledRun(durable(store), 't1', [a, live, b], runContext, () => NOW);
    expect(store.completions.map((c) => c.id)).toEqual([a.id, b.id]);
    for (const c of store.completions) expectOneTerminalEvent(c.events, 'tool.call.failed', 'tool.run_cancelled');
  });
});

describe("a step's outcome rows", () => {
  const row = (callId: string, status: InvocationRow['status']): InvocationRow => ({ ...baseRow(), callId, status });

  it('takes the terminal row as the outcome of a call that has two', () => {
    const running = row('c1', 'running');
    const failed = row('c1', 'failed');
    expect(outcomeRowsByCall([running, failed]).get('c1')).toBe(failed);
    expect(outcomeRowsByCall([failed, running]).get('c1')).toBe(failed);
  });

  it('reads a step as completed, waiting for a person, or running', async () => {
    const approvals = (status: ApprovalRow['status'] | null) => ({
      getByInvocation: async () => (status === null ? null : ({ id: 'ap1', status } as ApprovalRow)),
    });
    const done = [row('c1', 'succeeded'), row('c2', 'failed')];
    expect((await readStep(approvals(null), 't1', ['c1', 'c2'], done)).status).toBe('completed');
    const waiting = [row('c1', 'succeeded'), row('c2', 'waiting_for_approval')];
    const read = await readStep(approvals('pending'), 't1', ['c1', 'c2'], waiting);
    expect(read).toMatchObject({ status: 'waiting_for_approval', waiting: [{ callId: 'c2', approvalId: 'ap1' }] });
    expect(read.concluded.map((r) => r.callId)).toEqual(['c1']);
    // Decided, not yet re-run by a worker: running again.
    expect((await readStep(approvals('approved'), 't1', ['c1', 'c2'], waiting)).status).toBe('running');
    expect((await readStep(approvals(null), 't1', ['c1', 'c2'], [row('c1', 'succeeded')])).status).toBe('running');
  });
});
