import { ApprovalBindingError, FencingError, InvalidTransitionError, StoreError } from '@veetbot/domain';
import type { BreakerTallyGroup, InvocationTerminal } from '@veetbot/ports';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { newRowJson, terminalJson } from '../../src/repositories/hot-path';
import { sortGroups } from './api-stores.contract';
import { type HarnessFactory, intent, later, lease, newRun, newScene, rowsOf, toolEvent } from './harness';

/** The policy decision that asks for the approvals below (docs/adr/0047). */
const POLICY = { version: 'default@0123456789abcdef', ruleId: 'external-write-needs-approval' } as const;

const succeeded = (at: Date): InvocationTerminal => ({
  status: 'succeeded',
  outcomeStatus: 'succeeded',
  reasonCode: 'tool.succeeded',
  result: { ok: true, content: [{ type: 'text', text: 'done' }] },
  error: null,
  outputBytes: 42,
  truncated: false,
  artifactId: null,
  finishedAt: at,
});

/** § Deduplication on the way in, § The effect watermark, steps 8, 9 and 13, and fencing. */
export function invocationStoreContract(get: HarnessFactory): void {
  describe('InvocationStore', () => {
    it('inserts the intent with the Schema additions defaults, and its events in the same transaction', async () => {
      const h = get();
      const scene = await newScene(h);
      const row = intent(scene, { toolSource: 'mcp', serverId: 'acme', parallelGroup: '2b0f2a4e-3c1a-4d1e-9a55-0f5d3c2b1a00' });
      const result = await h.stores.invocations.insertIntent(scene.tenantId, row, [
        toolEvent(scene, 'tool.call.authorized', row, scene.t0),
      ]);
      expect(result.inserted).toBe(true);
      if (!result.inserted) return;
      expect(result.row).toMatchObject({
        id: row.id,
        tenantId: scene.tenantId,
        status: 'authorized',
        attemptNumber: 1,
        truncated: false,
        effectSentAt: null,
        startedAt: null,
        finishedAt: null,
        suspendedKind: null,
        outcomeStatus: null,
        toolSource: 'mcp',
        serverId: 'acme',
        idempotencyClass: 'non_idempotent',
        originTrust: 'user',
        arguments: row.arguments,
      });
      expect(result.row.createdAt.getTime()).toBe(scene.t0.getTime());
      const events = await h.stores.events.listAfter(scene.tenantId, scene.runId, 0, 10);
      expect(events.map((e) => [e.sequence, e.type])).toEqual([[1, 'tool.call.authorized']]);
    });

    it('deduplicates on the idempotency key: the second insert returns the existing row and writes nothing', async () => {
      const h = get();
      const scene = await newScene(h);
      const row = intent(scene);
      const first = await h.stores.invocations.insertIntent(scene.tenantId, row, [toolEvent(scene, 'tool.call.authorized', row, scene.t0)]);
      const again = { ...row, id: crypto.randomUUID(), callId: row.callId };
      const second = await h.stores.invocations.insertIntent(scene.tenantId, again, [
        toolEvent(scene, 'tool.call.authorized', again, later(scene.t0, 1)),
      ]);
      expect(first.inserted).toBe(true);
      expect(second.inserted).toBe(false);
      if (second.inserted) return;
      expect(second.existing.id).toBe(row.id);
      expect(await h.stores.invocations.listForRun(scene.tenantId, scene.runId)).toHaveLength(1);
      // The duplicate's events were not written.
      expect(await h.stores.events.listAfter(scene.tenantId, scene.runId, 0, 10)).toHaveLength(1);
    });

    it('50 concurrent inserts of one key leave exactly one row', async () => {
      const h = get();
      const scene = await newScene(h);
      const row = intent(scene);
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          h.stores.invocations.insertIntent(scene.tenantId, { ...row, id: crypto.randomUUID() }, [
            toolEvent(scene, 'tool.call.authorized', { ...row, id: `attempt-${i}` }, later(scene.t0, i)),
          ]),
        ),
      );
      const winners = results.filter((r) => r.inserted);
      expect(winners).toHaveLength(1);
      const winnerId = winners[0]?.inserted ? winners[0].row.id : null;
      for (const r of results) expect(r.inserted ? r.row.id : r.existing.id).toBe(winnerId);
      const count = await h.database.tenant(scene.tenantId, (tx) =>
        tx.execute(sql`select count(*)::int as n from tool_invocations where idempotency_key = ${row.idempotencyKey}`),
      );
      expect(rowsOf(count)[0]).toEqual({ n: 1 });
      expect(await h.stores.events.listAfter(scene.tenantId, scene.runId, 0, 100)).toHaveLength(1);
    });

    it('claims, marks the effect once, and completes; the terminal row is never rewritten', async () => {
      const h = get();
      const scene = await newScene(h);
      const fence = await lease(h, scene, 'worker-a', scene.t0);
      const row = intent(scene);
      await h.stores.invocations.insertIntent(scene.tenantId, row, []);

      // The watermark belongs to a RUNNING row only.
      await expect(h.stores.invocations.markEffectSent(scene.tenantId, row.id, fence, scene.t0)).rejects.toSatisfy(
        InvalidTransitionError.isInstance,
      );

      const started = later(scene.t0, 10);
      const claimed = await h.stores.invocations.claim(scene.tenantId, row.id, fence, started, [
        toolEvent(scene, 'tool.call.started', row, started),
      ]);
      expect(claimed).toMatchObject({ status: 'running', attemptNumber: 1 });
      expect(claimed.startedAt?.getTime()).toBe(started.getTime());

      const firstMark = await h.stores.invocations.markEffectSent(scene.tenantId, row.id, fence, later(scene.t0, 20));
      const secondMark = await h.stores.invocations.markEffectSent(scene.tenantId, row.id, fence, later(scene.t0, 30));
      expect(firstMark.getTime()).toBe(later(scene.t0, 20).getTime());
      expect(secondMark.getTime()).toBe(firstMark.getTime());

      const finished = later(scene.t0, 40);
      const done = await h.stores.invocations.complete(scene.tenantId, row.id, fence, succeeded(finished), [
        toolEvent(scene, 'tool.call.completed', row, finished, { outcome_status: 'succeeded', effect_sent: true }),
      ]);
      expect(done).toMatchObject({ status: 'succeeded', outcomeStatus: 'succeeded', reasonCode: 'tool.succeeded', outputBytes: 42 });
      expect(done.result).toEqual({ ok: true, content: [{ type: 'text', text: 'done' }] });
      expect(done.effectSentAt?.getTime()).toBe(firstMark.getTime());

      const rewrite: InvocationTerminal = {
        ...succeeded(later(scene.t0, 50)),
        status: 'failed',
        outcomeStatus: 'failed',
        reasonCode: 'tool.timeout',
      };
      await expect(h.stores.invocations.complete(scene.tenantId, row.id, fence, rewrite, [])).rejects.toSatisfy(
        InvalidTransitionError.isInstance,
      );
      await expect(h.stores.invocations.claim(scene.tenantId, row.id, fence, later(scene.t0, 60), [])).rejects.toSatisfy(
        InvalidTransitionError.isInstance,
      );
      const stored = await h.stores.invocations.getById(scene.tenantId, row.id);
      expect(stored).toMatchObject({ status: 'succeeded', reasonCode: 'tool.succeeded' });
      expect(stored?.finishedAt?.getTime()).toBe(finished.getTime());
      expect((await h.stores.events.listAfter(scene.tenantId, scene.runId, 0, 10)).map((e) => e.type)).toEqual([
        'tool.call.started',
        'tool.call.completed',
      ]);
    });

    it('defers only the intent and claim commits; the watermark and the result are flushed, whatever the default (ADR 0015)', async () => {
      const h = get();
      const scene = await newScene(h);
      const fence = await lease(h, scene, 'worker-a', scene.t0);
      const row = intent(scene);
      const rowJson = newRowJson(scene.tenantId, row);
      const terminal = terminalJson(succeeded(later(scene.t0, 3)));
      // Each hot function in a transaction of its own, with `preset` as the session's setting
      // before it; returns the setting the function left for that transaction's COMMIT.
      const flushModeAfter = async (preset: 'on' | 'off', call: ReturnType<typeof sql>): Promise<string> => {
        const result = await h.database.transaction({ role: 'owner' }, async (tx) => {
          await tx.execute(sql`select set_config('synchronous_commit', ${preset}, true)`);
          await tx.execute(call);
          return tx.execute(sql`select current_setting('synchronous_commit') as mode`);
        });
        return String(rowsOf<{ mode: string }>(result)[0]?.mode);
      };
      const stream = scene.runId;
      expect(
        await flushModeAfter('on', sql`select veetbot_insert_intent(${scene.tenantId}, ${rowJson}::jsonb, ${stream}, '[]'::jsonb)`),
      ).toBe('off');
      expect(
        await flushModeAfter(
          'on',
          sql`select veetbot_claim(${scene.tenantId}, ${row.id}::uuid, ${fence.runId}, ${fence.fencingToken}, ${later(scene.t0, 1).toISOString()}::timestamptz, ${stream}, '[]'::jsonb)`,
        ),
      ).toBe('off');
      const mark = sql`select veetbot_mark_effect_sent(${scene.tenantId}, ${row.id}::uuid, ${fence.runId}, ${fence.fencingToken}, ${later(scene.t0, 2).toISOString()}::timestamptz)`;
      // A deployment default of off is raised for the watermark's commit; on is left as it is.
      expect(await flushModeAfter('off', mark)).toBe('local');
      const complete = sql`select veetbot_complete(${scene.tenantId}, ${row.id}::uuid, ${fence.runId}, ${fence.fencingToken}, ${terminal}::jsonb, ${stream}, '[]'::jsonb)`;
      expect(await flushModeAfter('off', complete)).toBe('local');
      expect(await h.stores.invocations.getById(scene.tenantId, row.id)).toMatchObject({ status: 'succeeded', attemptNumber: 1 });
      // A refused write defers nothing: the refusal is the transaction's end.
      await expect(
        flushModeAfter(
          'on',
          sql`select veetbot_claim(${scene.tenantId}, ${row.id}::uuid, ${fence.runId}, ${fence.fencingToken}, ${later(scene.t0, 4).toISOString()}::timestamptz, ${stream}, '[]'::jsonb)`,
        ),
      ).rejects.toThrow();
      // A deduplicated intent writes nothing.
      expect(
        await flushModeAfter('on', sql`select veetbot_insert_intent(${scene.tenantId}, ${rowJson}::jsonb, ${stream}, '[]'::jsonb)`),
      ).toBe('on');
    });

    it("breakerTally counts a run's rows by breaker key and outcome, within the step bounds, for its tenant only", async () => {
      const h = get();
      const scene = await newScene(h);
      const other = await newScene(h);
      const fence = await lease(h, scene, 'worker-a', scene.t0);
      // Steps 1–3: the same call (same tool, same arguments hash) three times, denied twice
      // with one reason and running once; a different call once, succeeded; step 4 untouched.
      const same = intent(scene, { stepNumber: 1 });
      const twins = [
        same,
        intent(scene, { stepNumber: 2, argumentsHash: same.argumentsHash }),
        intent(scene, { stepNumber: 3, argumentsHash: same.argumentsHash }),
      ];
      const different = intent(scene, { stepNumber: 2, toolName: 'workspace.read_text' });
      const later4 = intent(scene, { stepNumber: 4, argumentsHash: same.argumentsHash });
      for (const row of [...twins, different, later4]) await h.stores.invocations.insertIntent(scene.tenantId, row, []);
      const denied = (at: Date): InvocationTerminal => ({
        ...succeeded(at),
        status: 'denied',
        outcomeStatus: 'denied',
        reasonCode: 'policy.denied',
        result: null,
      });
      await h.stores.invocations.complete(scene.tenantId, twins[0]!.id, fence, denied(later(scene.t0, 1)), []);
      await h.stores.invocations.complete(scene.tenantId, twins[1]!.id, fence, denied(later(scene.t0, 2)), []);
      await h.stores.invocations.claim(scene.tenantId, twins[2]!.id, fence, later(scene.t0, 3), []);
      await h.stores.invocations.claim(scene.tenantId, different.id, fence, later(scene.t0, 3), []);
      await h.stores.invocations.complete(scene.tenantId, different.id, fence, succeeded(later(scene.t0, 4)), []);

      const group = (
        row: { toolName: string; argumentsHash: string },
        status: BreakerTallyGroup['status'],
        outcomeStatus: BreakerTallyGroup['outcomeStatus'],
        reasonCode: string | null,
        count: number,
      ): BreakerTallyGroup => ({
        toolName: row.toolName,
        argumentsHash: row.argumentsHash,
        status,
        outcomeStatus,
        reasonCode,
        count,
      });
      const through3 = await h.stores.invocations.breakerTally(scene.tenantId, scene.runId, { to: 3 });
      expect(through3.rows).toBe(4);
      expect(sortGroups(through3.groups)).toEqual(
        sortGroups([
          group(same, 'denied', 'denied', 'policy.denied', 2),
          group(same, 'running', null, null, 1),
          group(different, 'succeeded', 'succeeded', 'tool.succeeded', 1),
        ]),
      );
      const step2 = await h.stores.invocations.breakerTally(scene.tenantId, scene.runId, { from: 2, to: 2 });
      expect(sortGroups(step2.groups)).toEqual(
        sortGroups([group(same, 'denied', 'denied', 'policy.denied', 1), group(different, 'succeeded', 'succeeded', 'tool.succeeded', 1)]),
      );
      expect((await h.stores.invocations.breakerTally(scene.tenantId, scene.runId)).rows).toBe(5);
      expect(await h.stores.invocations.breakerTally(scene.tenantId, scene.runId, { to: 0 })).toEqual({ rows: 0, groups: [] });
      // Another tenant's view of this run: nothing, not even a count.
      expect(await h.stores.invocations.breakerTally(other.tenantId, scene.runId)).toEqual({ rows: 0, groups: [] });
    });

    it('the hot-path writes keep a stream gapless when their events repeat a stored derivation key', async () => {
      const h = get();
      const scene = await newScene(h);
      const fence = await lease(h, scene, 'worker-a', scene.t0);
      const row = intent(scene);
      const authorized = toolEvent(scene, 'tool.call.authorized', row, scene.t0);
      await h.stores.invocations.insertIntent(scene.tenantId, row, [authorized]);
      const started = toolEvent(scene, 'tool.call.started', row, later(scene.t0, 1));
      // A retried claim carries the event already stored, twice, around a new one.
      await h.stores.invocations.claim(scene.tenantId, row.id, fence, later(scene.t0, 1), [
        { ...authorized, payload: { ...authorized.payload, call_id: 'changed' } },
        started,
        started,
      ]);
      await h.stores.invocations.complete(scene.tenantId, row.id, fence, succeeded(later(scene.t0, 2)), [
        toolEvent(scene, 'tool.call.completed', row, later(scene.t0, 2), { outcome_status: 'succeeded', effect_sent: false }),
      ]);
      const events = await h.stores.events.listAfter(scene.tenantId, scene.runId, 0, 10);
      expect(events.map((e) => [e.sequence, e.type, e.payload.call_id])).toEqual([
        [1, 'tool.call.authorized', row.callId],
        [2, 'tool.call.started', row.callId],
        [3, 'tool.call.completed', row.callId],
      ]);
      // The counter gave back what the skipped keys had reserved: the next event is 4.
      const [next] = await h.stores.events.append(scene.tenantId, [{ ...started, type: 'run.progress', derivationKey: `next:${row.id}` }]);
      expect(next?.sequence).toBe(4);
    });

    it('refuses any writer rewriting a terminal row, not only the repository (trigger)', async () => {
      const h = get();
      const scene = await newScene(h);
      const fence = await lease(h, scene, 'worker-a', scene.t0);
      const row = intent(scene);
      await h.stores.invocations.insertIntent(scene.tenantId, row, []);
      await h.stores.invocations.complete(
        scene.tenantId,
        row.id,
        fence,
        { ...succeeded(scene.t0), status: 'denied', outcomeStatus: 'denied', reasonCode: 'policy.matrix.external_write' },
        [],
      );
      const attempt = h.database.tenant(scene.tenantId, (tx) =>
        tx.execute(sql`update tool_invocations set status = 'succeeded' where id = ${row.id}`),
      );
      await expect(attempt).rejects.toSatisfy((e: unknown) => StoreError.isInstance(e) && e.code === 'store.invalid_transition');
      expect((await h.stores.invocations.getById(scene.tenantId, row.id))?.status).toBe('denied');
    });

    it('a re-claim after recovery increments attempt_number and keeps the watermark', async () => {
      const h = get();
      const scene = await newScene(h);
      const first = await lease(h, scene, 'worker-a', scene.t0, 1_000);
      const row = intent(scene);
      await h.stores.invocations.insertIntent(scene.tenantId, row, []);
      await h.stores.invocations.claim(scene.tenantId, row.id, first, scene.t0, []);
      const mark = await h.stores.invocations.markEffectSent(scene.tenantId, row.id, first, later(scene.t0, 5));
      // worker-a dies; its lease expires; worker-b takes the run over.
      const second = await lease(h, scene, 'worker-b', later(scene.t0, 5_000));
      const reclaimed = await h.stores.invocations.claim(scene.tenantId, row.id, second, later(scene.t0, 5_001), []);
      expect(reclaimed.attemptNumber).toBe(2);
      expect(reclaimed.effectSentAt?.getTime()).toBe(mark.getTime());
      expect(reclaimed.idempotencyKey).toBe(row.idempotencyKey);
    });

    it('fencing: after another owner acquires the lease, the stale token cannot claim, mark or complete', async () => {
      const h = get();
      const scene = await newScene(h);
      const stale = await lease(h, scene, 'worker-a', scene.t0, 1_000);
      const claimedRow = intent(scene);
      const authorizedRow = intent(scene);
      await h.stores.invocations.insertIntent(scene.tenantId, claimedRow, []);
      await h.stores.invocations.insertIntent(scene.tenantId, authorizedRow, []);
      await h.stores.invocations.claim(scene.tenantId, claimedRow.id, stale, scene.t0, []);

      const fresh = await lease(h, scene, 'worker-b', later(scene.t0, 2_000));
      expect(fresh.fencingToken).toBeGreaterThan(stale.fencingToken);

      const startedEvent = toolEvent(scene, 'tool.call.started', authorizedRow, later(scene.t0, 2_001));
      await expect(
        h.stores.invocations.claim(scene.tenantId, authorizedRow.id, stale, later(scene.t0, 2_001), [startedEvent]),
      ).rejects.toSatisfy(FencingError.isInstance);
      await expect(h.stores.invocations.markEffectSent(scene.tenantId, claimedRow.id, stale, later(scene.t0, 2_002))).rejects.toSatisfy(
        FencingError.isInstance,
      );
      await expect(
        h.stores.invocations.complete(scene.tenantId, claimedRow.id, stale, succeeded(later(scene.t0, 2_003)), []),
      ).rejects.toSatisfy(FencingError.isInstance);
      await expect(h.stores.runs.renewLease(scene.tenantId, stale, 1_000, later(scene.t0, 2_004))).rejects.toSatisfy(
        FencingError.isInstance,
      );
      expect(await h.stores.runs.releaseLease(scene.tenantId, stale)).toBe(false);

      // Nothing the stale owner tried is visible; the fresh owner proceeds.
      expect(await h.stores.invocations.getById(scene.tenantId, authorizedRow.id)).toMatchObject({ status: 'authorized', startedAt: null });
      expect(await h.stores.invocations.getById(scene.tenantId, claimedRow.id)).toMatchObject({ status: 'running', effectSentAt: null });
      expect(await h.stores.events.listAfter(scene.tenantId, scene.runId, 0, 10)).toHaveLength(0);
      const done = await h.stores.invocations.complete(scene.tenantId, claimedRow.id, fresh, succeeded(later(scene.t0, 3_000)), []);
      expect(done.status).toBe('succeeded');
    });

    it('a fence is for its own run only', async () => {
      const h = get();
      const scene = await newScene(h);
      const other = await newScene(h);
      const row = intent(scene);
      await h.stores.invocations.insertIntent(scene.tenantId, row, []);
      const otherRunId = await newRun(h, scene.tenantId, scene.sessionId, scene.t0);
      const wrong = await h.stores.runs.acquireLease(scene.tenantId, otherRunId, 'worker-a', 1_000, scene.t0);
      expect(wrong).not.toBeNull();
      await expect(
        h.stores.invocations.claim(scene.tenantId, row.id, { runId: otherRunId, fencingToken: wrong?.fencingToken ?? 0 }, scene.t0, []),
      ).rejects.toSatisfy(FencingError.isInstance);
      // Another tenant's lease cannot be used either.
      const foreign = await lease(h, other, 'worker-a', scene.t0);
      await expect(h.stores.invocations.claim(scene.tenantId, row.id, foreign, scene.t0, [])).rejects.toSatisfy(FencingError.isInstance);
    });

    it('approval: WAITING_FOR_APPROVAL gets one pending approval; authorize waits for approved', async () => {
      const h = get();
      const scene = await newScene(h);
      const fence = await lease(h, scene, 'worker-a', scene.t0);
      const row = intent(scene, { status: 'waiting_for_approval' });
      await h.stores.invocations.insertIntent(scene.tenantId, row, []);
      const approval = await h.stores.approvals.getByInvocation(scene.tenantId, row.id);
      expect(approval).toMatchObject({ status: 'pending', runId: scene.runId, decidedBy: null });
      expect((await h.stores.approvals.listPending(scene.tenantId, 10)).map((a) => a.invocationId)).toEqual([row.id]);

      await expect(h.stores.invocations.authorize(scene.tenantId, row.id, fence, [])).rejects.toSatisfy(InvalidTransitionError.isInstance);
      await expect(h.stores.invocations.claim(scene.tenantId, row.id, fence, scene.t0, [])).rejects.toSatisfy(
        InvalidTransitionError.isInstance,
      );

      const decided = await h.stores.approvals.decide(
        scene.tenantId,
        approval?.id ?? '',
        { decision: 'approved', decidedBy: 'principal-admin', decidedAt: later(scene.t0, 100) },
        [
          {
            runId: scene.runId,
            type: 'approval.decided',
            payload: { approval_id: approval?.id },
            derivationKey: `approval:${approval?.id}`,
            createdAt: later(scene.t0, 100),
          },
        ],
      );
      expect(decided).toMatchObject({ status: 'approved', decidedBy: 'principal-admin' });
      await expect(
        h.stores.approvals.decide(scene.tenantId, decided.id, { decision: 'denied', decidedBy: 'x', decidedAt: later(scene.t0, 200) }, []),
      ).rejects.toSatisfy(InvalidTransitionError.isInstance);

      const authorized = await h.stores.invocations.authorize(scene.tenantId, row.id, fence, []);
      expect(authorized.status).toBe('authorized');
      expect((await h.stores.invocations.claim(scene.tenantId, row.id, fence, scene.t0, [])).status).toBe('running');
    });

    it('setWaitingForApproval moves an authorized row and opens exactly one approval', async () => {
      const h = get();
      const scene = await newScene(h);
      const fence = await lease(h, scene, 'worker-a', scene.t0);
      const row = intent(scene, { status: 'proposed' });
      await h.stores.invocations.insertIntent(scene.tenantId, row, []);
      const { row: waiting, approval } = await h.stores.invocations.setWaitingForApproval(
        scene.tenantId,
        row.id,
        fence,
        later(scene.t0, 1),
        POLICY,
        [],
      );
      expect(waiting.status).toBe('waiting_for_approval');
      expect(approval).toMatchObject({ invocationId: row.id, status: 'pending' });
      expect(approval.requestedAt.getTime()).toBe(later(scene.t0, 1).getTime());
      // docs/adr/0047: the row and its approval record the policy that asked and the arguments hash.
      expect(waiting).toMatchObject({ policyVersion: POLICY.version, policyRuleId: POLICY.ruleId });
      expect(approval).toMatchObject({ argumentsHash: row.argumentsHash, policyVersion: POLICY.version, policyRuleId: POLICY.ruleId });
      // Asked again under the same version: the one approval, unchanged (rule 5).
      const again = await h.stores.invocations.setWaitingForApproval(scene.tenantId, row.id, fence, later(scene.t0, 2), POLICY, []);
      expect(again.approval).toMatchObject({ id: approval.id, status: 'pending', policyVersion: POLICY.version });
      expect(again.approval.requestedAt.getTime()).toBe(later(scene.t0, 1).getTime());
      // A decision bound to another arguments hash or policy version is refused, and nothing is recorded.
      for (const [expected, mismatch] of [
        [{ argumentsHash: 'f'.repeat(64), policyVersion: POLICY.version }, 'arguments_hash'],
        [{ argumentsHash: row.argumentsHash, policyVersion: 'default@0000000000000000' }, 'policy_version'],
      ] as const) {
        await expect(
          h.stores.approvals.decide(
            scene.tenantId,
            approval.id,
            { decision: 'approved', decidedBy: 'p', decidedAt: later(scene.t0, 2), expected },
            [],
          ),
        ).rejects.toSatisfy((e: unknown) => ApprovalBindingError.isInstance(e) && e.mismatch === mismatch);
      }
      expect(await h.stores.approvals.get(scene.tenantId, approval.id)).toMatchObject({ status: 'pending', decidedBy: null });
      // Approved under one version, then asked under another: re-opened pending under the new one.
      await h.stores.approvals.decide(
        scene.tenantId,
        approval.id,
        {
          decision: 'approved',
          decidedBy: 'p',
          decidedAt: later(scene.t0, 2),
          expected: { argumentsHash: row.argumentsHash, policyVersion: POLICY.version },
        },
        [],
      );
      const changed = { version: 'default@1111111111111111', ruleId: 'external-write-needs-approval' };
      const reasked = await h.stores.invocations.setWaitingForApproval(scene.tenantId, row.id, fence, later(scene.t0, 2), changed, []);
      expect(reasked.row).toMatchObject({ status: 'waiting_for_approval', policyVersion: changed.version });
      expect(reasked.approval).toMatchObject({
        id: approval.id,
        status: 'pending',
        decidedBy: null,
        decidedAt: null,
        policyVersion: changed.version,
      });
      // Denied approval ends the row DENIED through complete.
      await h.stores.approvals.decide(
        scene.tenantId,
        approval.id,
        { decision: 'denied', decidedBy: 'p', decidedAt: later(scene.t0, 3) },
        [],
      );
      const denied = await h.stores.invocations.complete(
        scene.tenantId,
        row.id,
        fence,
        {
          ...succeeded(later(scene.t0, 4)),
          status: 'denied',
          outcomeStatus: 'denied',
          reasonCode: 'policy.matrix.external_write',
          result: null,
        },
        [],
      );
      expect(denied.status).toBe('denied');
    });

    it('setWaitingForApproval moves an unsuspended RUNNING row (the pre-effect re-check), keeps its watermark, and re-claims after approval; never a suspended or terminal row', async () => {
      const h = get();
      const scene = await newScene(h);
      const fence = await lease(h, scene, 'worker-a', scene.t0);
      const row = intent(scene, { idempotencyClass: 'conditionally_idempotent' });
      await h.stores.invocations.insertIntent(scene.tenantId, row, []);
      await h.stores.invocations.claim(scene.tenantId, row.id, fence, scene.t0, []);
      const sentAt = await h.stores.invocations.markEffectSent(scene.tenantId, row.id, fence, later(scene.t0, 1));
      const { row: waiting, approval } = await h.stores.invocations.setWaitingForApproval(
        scene.tenantId,
        row.id,
        fence,
        later(scene.t0, 2),
        POLICY,
        [],
      );
      expect(waiting).toMatchObject({ status: 'waiting_for_approval', attemptNumber: 1 });
      expect(waiting.effectSentAt?.getTime()).toBe(sentAt.getTime());
      expect(approval).toMatchObject({ invocationId: row.id, status: 'pending' });
      // Nothing can claim it before the approval is decided.
      await expect(h.stores.invocations.claim(scene.tenantId, row.id, fence, later(scene.t0, 3), [])).rejects.toThrow();
      await expect(h.stores.invocations.authorize(scene.tenantId, row.id, fence, [])).rejects.toSatisfy(InvalidTransitionError.isInstance);
      await h.stores.approvals.decide(
        scene.tenantId,
        approval.id,
        { decision: 'approved', decidedBy: 'p', decidedAt: later(scene.t0, 4) },
        [],
      );
      await h.stores.invocations.authorize(scene.tenantId, row.id, fence, []);
      expect(await h.stores.invocations.claim(scene.tenantId, row.id, fence, later(scene.t0, 5), [])).toMatchObject({
        status: 'running',
        attemptNumber: 1,
      });

      const suspended = intent(scene, { toolName: 'conversation.ask_user', idempotencyClass: 'idempotent' });
      await h.stores.invocations.insertIntent(scene.tenantId, suspended, []);
      await h.stores.invocations.claim(scene.tenantId, suspended.id, fence, scene.t0, []);
      await h.stores.invocations.suspend(scene.tenantId, suspended.id, fence, { kind: 'user_input', ref: 'question-1' }, []);
      await expect(
        h.stores.invocations.setWaitingForApproval(scene.tenantId, suspended.id, fence, later(scene.t0, 6), POLICY, []),
      ).rejects.toSatisfy(InvalidTransitionError.isInstance);
      const ended = await h.stores.invocations.complete(scene.tenantId, row.id, fence, succeeded(later(scene.t0, 7)), []);
      expect(ended.status).toBe('succeeded');
      await expect(
        h.stores.invocations.setWaitingForApproval(scene.tenantId, row.id, fence, later(scene.t0, 8), POLICY, []),
      ).rejects.toSatisfy(InvalidTransitionError.isInstance);
    });

    it('a question suspends its row and moves its running run to waiting_for_user in one commit; a child run does not', async () => {
      const h = get();
      const scene = await newScene(h);
      const fence = await lease(h, scene, 'worker-a', scene.t0, 60_000);
      const delegated = intent(scene, { toolName: 'delegate.run', idempotencyClass: 'idempotent' });
      await h.stores.invocations.insertIntent(scene.tenantId, delegated, []);
      await h.stores.invocations.claim(scene.tenantId, delegated.id, fence, scene.t0, []);
      await h.stores.invocations.suspend(scene.tenantId, delegated.id, fence, { kind: 'child_run', ref: 'child-1' }, []);
      expect((await h.stores.runs.get(scene.tenantId, scene.runId))?.status).toBe('running');

      const asked = intent(scene, { toolName: 'conversation.ask_user', idempotencyClass: 'idempotent' });
      await h.stores.invocations.insertIntent(scene.tenantId, asked, []);
      await h.stores.invocations.claim(scene.tenantId, asked.id, fence, scene.t0, []);
      const row = await h.stores.invocations.suspend(scene.tenantId, asked.id, fence, { kind: 'user_input', ref: asked.id }, []);
      expect(row).toMatchObject({ status: 'running', suspendedKind: 'user_input', suspendedRef: asked.id });
      expect((await h.stores.runs.get(scene.tenantId, scene.runId))?.status).toBe('waiting_for_user');
    });

    it('the recovery sweep finds RUNNING rows of expired or released leases, excluding suspended ones', async () => {
      const h = get();
      const scene = await newScene(h);
      const fence = await lease(h, scene, 'worker-a', scene.t0, 1_000);
      const dead = intent(scene);
      const suspended = intent(scene, { toolName: 'conversation.ask_user', idempotencyClass: 'idempotent' });
      const live = intent(scene);
      for (const row of [dead, suspended]) {
        await h.stores.invocations.insertIntent(scene.tenantId, row, []);
        await h.stores.invocations.claim(scene.tenantId, row.id, fence, scene.t0, []);
      }
      await h.stores.invocations.suspend(scene.tenantId, suspended.id, fence, { kind: 'user_input', ref: 'question-1' }, []);
      await expect(h.stores.invocations.claim(scene.tenantId, suspended.id, fence, scene.t0, [])).rejects.toSatisfy(
        InvalidTransitionError.isInstance,
      );

      // A second run with a live lease: its RUNNING row is in flight, not dead.
      const liveScene = { ...scene, runId: await newRun(h, scene.tenantId, scene.sessionId, scene.t0) };
      const liveFence = await lease(h, liveScene, 'worker-c', scene.t0, 3_600_000);
      await h.stores.invocations.insertIntent(scene.tenantId, { ...live, runId: liveScene.runId }, []);
      await h.stores.invocations.claim(scene.tenantId, live.id, liveFence, scene.t0, []);

      const ours = new Set([dead.id, suspended.id, live.id]);
      const before = (await h.stores.invocations.findExpiredRunning(later(scene.t0, 500), 10_000)).filter((r) => ours.has(r.id));
      expect(before).toEqual([]);

      const after = (await h.stores.invocations.findExpiredRunning(later(scene.t0, 2_000), 10_000)).filter((r) => ours.has(r.id));
      expect(after.map((r) => r.id)).toEqual([dead.id]);
      // The full row comes back (read under the tenant's own row-level security).
      expect(after[0]).toMatchObject({ tenantId: scene.tenantId, idempotencyClass: 'non_idempotent', arguments: dead.arguments });

      // Released (the suspension path releases the lease): still excluded while suspended.
      expect(await h.stores.runs.releaseLease(scene.tenantId, fence)).toBe(true);
      const released = (await h.stores.invocations.findExpiredRunning(later(scene.t0, 600), 10_000)).filter((r) => ours.has(r.id));
      expect(released.map((r) => r.id)).toEqual([dead.id]);
    });

    it('finds an identical UNCERTAIN mutation in the run (the repeat guard)', async () => {
      const h = get();
      const scene = await newScene(h);
      const fence = await lease(h, scene, 'worker-a', scene.t0);
      const row = intent(scene);
      await h.stores.invocations.insertIntent(scene.tenantId, row, []);
      expect(await h.stores.invocations.findUncertainRepeat(scene.tenantId, scene.runId, row.toolName, row.argumentsHash)).toBeNull();
      await h.stores.invocations.claim(scene.tenantId, row.id, fence, scene.t0, []);
      await h.stores.invocations.complete(
        scene.tenantId,
        row.id,
        fence,
        {
          ...succeeded(later(scene.t0, 1)),
          status: 'uncertain',
          outcomeStatus: 'uncertain',
          reasonCode: 'tool.outcome_unknown',
          result: null,
        },
        [],
      );
      expect((await h.stores.invocations.findUncertainRepeat(scene.tenantId, scene.runId, row.toolName, row.argumentsHash))?.id).toBe(
        row.id,
      );
      expect(await h.stores.invocations.findUncertainRepeat(scene.tenantId, scene.runId, row.toolName, 'f'.repeat(64))).toBeNull();
      expect(await h.stores.invocations.findUncertainRepeat(scene.tenantId, scene.runId, 'demo.other', row.argumentsHash)).toBeNull();
    });

    it('getByKey and listForRun read back what was written, in step order', async () => {
      const h = get();
      const scene = await newScene(h);
      const second = intent(scene, { stepNumber: 2 });
      const first = intent(scene, { stepNumber: 1 });
      await h.stores.invocations.insertIntent(scene.tenantId, second, []);
      await h.stores.invocations.insertIntent(scene.tenantId, first, []);
      expect((await h.stores.invocations.getByKey(scene.tenantId, first.idempotencyKey))?.id).toBe(first.id);
      expect(await h.stores.invocations.getByKey(scene.tenantId, 'e'.repeat(64))).toBeNull();
      expect((await h.stores.invocations.listForRun(scene.tenantId, scene.runId)).map((r) => r.id)).toEqual([first.id, second.id]);
      // Inclusive step bounds: one step's rows, or the rows before a step.
      const third = intent(scene, { stepNumber: 3 });
      await h.stores.invocations.insertIntent(scene.tenantId, third, []);
      const ids = async (steps: { from?: number; to?: number }) =>
        (await h.stores.invocations.listForRun(scene.tenantId, scene.runId, steps)).map((r) => r.id);
      expect(await ids({ from: 2, to: 2 })).toEqual([second.id]);
      expect(await ids({ to: 2 })).toEqual([first.id, second.id]);
      expect(await ids({ from: 2 })).toEqual([second.id, third.id]);
      expect(await ids({ to: 0 })).toEqual([]);
    });
  });
}
