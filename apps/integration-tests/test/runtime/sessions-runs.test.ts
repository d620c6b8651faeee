import { describe, expect, it } from 'vitest';
import { drivers } from '../../src';
import { canonicalJson, sha256Hex } from '@veetbot/domain';
import { resolveRuntimeSettings } from '@veetbot/runtime';
import { callOf, gate, newTenant, readIntent, tool, useHarness } from './fixtures';

describe.each(drivers())('runtime sessions runs on %s', (driver) => {
  const harness = useHarness(driver);

  describe('openSession / createRun', () => {
    it('pins the session: names, full specs and tool_schema_sha256, filtered for the principal', async () => {
      const h = await harness({ tools: [tool({ name: 'demo.read' }), tool({ name: 'demo.admin', required_scopes: ['demo.admin'] })] });
      const session = await h.runtime.openSession(
        h.tenantId,
        h.principal,
        { agentId: 'agent' },
        { flags: {}, targetKinds: ['in_process'] },
      );
      expect(session.toolNames).toEqual(['demo.read']);
      expect(session.toolSchemaSha256).toBe(sha256Hex(canonicalJson(session.specs)));
      expect(session.agentId).toBe('agent');
      expect(session.principalId).toBe('p1');
    });

    it('refuses a principal of another tenant, and a run in a session that does not exist', async () => {
      const h = await harness({ tools: [tool({ name: 'demo.read' })] });
      await expect(
        h.runtime.openSession('t2', h.principal, { agentId: 'a' }, { flags: {}, targetKinds: ['in_process'] }),
      ).rejects.toMatchObject({
        code: 'runtime.principal_mismatch',
      });
      await expect(h.runtime.createRun(h.tenantId, crypto.randomUUID(), { deadlineAt: new Date() })).rejects.toMatchObject({
        code: 'runtime.session_not_found',
      });
    });

    it('keeps resolving what the session pinned after the registry learns a newer version', async () => {
      const v1 = tool({ name: 'demo.read', version: '1' }, async () => ({ ok: true, content: [{ type: 'text', text: 'v1' }] }));
      const h = await harness({ tools: [v1] });
      const { runId } = await h.open();
      h.registry.registerBuiltin(
        tool({ name: 'demo.read', version: '2' }, async () => ({ ok: true, content: [{ type: 'text', text: 'v2' }] })),
      );
      const outcome = await h.runtime.submitStep(h.step(runId, 1, [callOf('a', 'demo.read', {})]));
      const part = outcome.items[0]?.content[0];
      expect(part?.type === 'text' && part.text).toContain('v1');
    });
  });

  describe('submitStep: refusals', () => {
    it('treats another tenant’s run as not found', async () => {
      const h = await harness({ tools: [tool({ name: 'demo.read' })] });
      const { runId } = await h.open();
      // Another tenant that exists in the same database: the store's tenant scope hides the run.
      const t2 = await newTenant(h.stores, 't2');
      const other = { tenant_id: t2, principal_id: 'p2', scopes: [] };
      await expect(
        h.runtime.submitStep({ tenantId: t2, runId, stepNumber: 1, principal: other, calls: [callOf('a', 'demo.read', {})] }),
      ).rejects.toMatchObject({
        code: 'runtime.run_not_found',
      });
    });

    it('refuses an invalid submission, duplicate call ids, and a different batch under an existing step number', async () => {
      const h = await harness({ tools: [tool({ name: 'demo.read' })] });
      const { runId } = await h.open();
      await expect(h.runtime.submitStep(h.step(runId, 1, []))).rejects.toMatchObject({ code: 'runtime.step_invalid' });
      await expect(
        h.runtime.submitStep(h.step(runId, 1, [callOf('a', 'demo.read', {}), callOf('a', 'demo.read', { n: 1 })])),
      ).rejects.toMatchObject({
        code: 'runtime.step_invalid',
      });
      await h.runtime.submitStep(h.step(runId, 1, [callOf('a', 'demo.read', { n: 1 })]));
      await expect(h.runtime.submitStep(h.step(runId, 1, [callOf('a', 'demo.read', { n: 2 })]))).rejects.toMatchObject({
        code: 'runtime.step_conflict',
      });
    });

    it('refuses a run that is not running', async () => {
      const h = await harness({ tools: [tool({ name: 'demo.read' })] });
      const { runId } = await h.open();
      await h.runtime.cancelRun(h.tenantId, runId);
      await expect(h.runtime.submitStep(h.step(runId, 1, [callOf('a', 'demo.read', {})]))).rejects.toMatchObject({
        code: 'runtime.run_not_active',
      });
    });

    it('stores the submission on the step row so a later worker can rebuild every request', async () => {
      const h = await harness({ tools: [tool({ name: 'demo.read' })] });
      const { runId } = await h.open();
      await h.runtime.submitStep({
        ...h.step(runId, 3, [
          { ...callOf('a', 'demo.read', { n: 1 }, ['user', 'external_untrusted']), argumentTrust: { n: 'external_untrusted' } },
        ]),
        callerTimeoutSeconds: 9,
      });
      const step = await h.stores.steps.get(h.tenantId, runId, 3);
      expect(step?.batch).toEqual({
        version: 1,
        principal: h.principal,
        calls: [
          {
            call_id: 'a',
            tool_name: 'demo.read',
            arguments: { n: 1 },
            context_trust: ['user', 'external_untrusted'],
            argument_trust: { n: 'external_untrusted' },
            origin: 'model',
          },
        ],
        caller_timeout_seconds: 9,
      });
    });
  });

  describe('cancelRun', () => {
    it('cancels the run and fires the cancellation token of its in-flight calls', async () => {
      const hold = gate();
      const entered = gate();
      let cancelled = false;
      const waiting = tool({ name: 'demo.wait' }, async (_args, ctx) => {
        entered.release();
        ctx.cancellation.addEventListener('abort', () => {
          cancelled = true;
          hold.release();
        });
        await hold.wait;
        return { ok: true, content: [] };
      });
      const h = await harness({ tools: [waiting, tool({ name: 'demo.read' })] });
      const { runId } = await h.open();
      const pending = h.runtime.submitStep(h.step(runId, 1, [callOf('a', 'demo.wait', {}), callOf('b', 'demo.read', { n: 1 }, ['user'])]));
      // The call is in flight: inside execute (a real store's writes take real time before it gets there).
      await entered.wait;
      const run = await h.runtime.cancelRun(h.tenantId, runId);
      expect(run.status).toBe('cancelled');
      await pending;
      expect(cancelled).toBe(true);
      // Cancelling again is a no-op; a run that failed cannot be cancelled.
      expect((await h.runtime.cancelRun(h.tenantId, runId)).status).toBe('cancelled');
      const other = await h.open();
      await h.stores.runs.setStatus(h.tenantId, other.runId, 'failed', h.clock.now());
      await expect(h.runtime.cancelRun(h.tenantId, other.runId)).rejects.toMatchObject({ code: 'runtime.run_not_active' });
    });

    it('completes a suspended call of the cancelled run as failed with tool.run_cancelled', async () => {
      const h = await harness({ tools: [tool({ name: 'demo.read' })] });
      const { runId, sessionId } = await h.open();
      // A control tool's suspension, written as the pipeline would leave it.
      const lease = await h.stores.runs.acquireLease(h.tenantId, runId, 'worker-x', 1000, h.clock.now());
      const fence = { runId, fencingToken: lease!.fencingToken };
      const { row } = (await h.stores.invocations.insertIntent(
        h.tenantId,
        readIntent(h.clock.now(), {
          runId,
          sessionId,
          stepNumber: 1,
          callId: 'ask',
          idempotencyKey: 'k'.repeat(64),
          argumentsHash: 'h'.repeat(64),
        }),
        [],
      )) as { row: { id: string } };
      await h.stores.invocations.claim(h.tenantId, row.id, fence, h.clock.now(), []);
      await h.stores.invocations.suspend(h.tenantId, row.id, fence, { kind: 'user_input', ref: 'q1' }, []);
      await h.stores.runs.releaseLease(h.tenantId, fence);
      // The sweep leaves a suspended row alone.
      expect((await h.runtime.sweep()).examined).toBe(0);

      await h.runtime.cancelRun(h.tenantId, runId);
      expect(await h.stores.invocations.getById(h.tenantId, row.id)).toMatchObject({ status: 'failed', reasonCode: 'tool.run_cancelled' });
    });
  });

  describe('settings', () => {
    it('fills defaults and refuses values below their floor', () => {
      expect(resolveRuntimeSettings({})).toEqual({
        leaseTtlMs: 30_000,
        batchConcurrency: 8,
        maximumAttempts: 5,
        inlineMaximumBytes: 4096,
        sweepBatchSize: 100,
        // § The programmatic orchestration bridge: the hold's default, and the per-turn cap.
        approvalHoldSeconds: 300,
        bridgeMaximumCalls: 64,
        // § Control tools, delegate.run: ancestors a run may have (docs/adr/0050).
        maximumDelegationDepth: 3,
        // docs/adr/0063: the sweep's reconciliation attempts, backoff and per-attempt limit.
        reconcileMaximumAttempts: 5,
        reconcileBackoffMs: 30_000,
        reconcileTimeoutMs: 10_000,
      });
      expect(() => resolveRuntimeSettings({ inlineMaximumBytes: 1023 })).toThrow(/inlineMaximumBytes/);
      expect(() => resolveRuntimeSettings({ batchConcurrency: 0 })).toThrow(/batchConcurrency/);
      expect(() => resolveRuntimeSettings({ bridgeMaximumCalls: 0 })).toThrow(/bridgeMaximumCalls/);
      expect(() => resolveRuntimeSettings({ approvalHoldSeconds: -1 })).toThrow(/approvalHoldSeconds/);
      expect(() => resolveRuntimeSettings({ maximumDelegationDepth: -1 })).toThrow(/maximumDelegationDepth/);
      expect(() => resolveRuntimeSettings({ reconcileMaximumAttempts: 0 })).toThrow(/reconcileMaximumAttempts/);
      expect(() => resolveRuntimeSettings({ reconcileTimeoutMs: 0 })).toThrow(/reconcileTimeoutMs/);
      // A hold of 0 is allowed: suspend at once, never hold a sandbox open.
      expect(resolveRuntimeSettings({ approvalHoldSeconds: 0 }).approvalHoldSeconds).toBe(0);
    });
  });
});
