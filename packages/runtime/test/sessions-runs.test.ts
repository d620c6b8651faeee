import { describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '@veetbot/domain';
import { resolveRuntimeSettings } from '../src/runtime-deps';
import { callOf, gate, harness, principal, tool } from './fixtures';

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('openSession / createRun', () => {
  it('pins the session: names, full specs and tool_schema_sha256, filtered for the principal', async () => {
    const h = harness({ tools: [tool({ name: 'demo.read' }), tool({ name: 'demo.admin', required_scopes: ['demo.admin'] })] });
    const session = await h.runtime.openSession('t1', principal, { agentId: 'agent' }, { flags: {}, targetKinds: ['in_process'] });
    expect(session.toolNames).toEqual(['demo.read']);
    expect(session.toolSchemaSha256).toBe(sha256Hex(canonicalJson(session.specs)));
    expect(session.agentId).toBe('agent');
    expect(session.principalId).toBe('p1');
  });

  it('refuses a principal of another tenant, and a run in a session that does not exist', async () => {
    const h = harness({ tools: [tool({ name: 'demo.read' })] });
    await expect(h.runtime.openSession('t2', principal, { agentId: 'a' }, { flags: {}, targetKinds: ['in_process'] })).rejects.toMatchObject({
      code: 'runtime.principal_mismatch',
    });
    await expect(h.runtime.createRun('t1', crypto.randomUUID(), { deadlineAt: new Date() })).rejects.toMatchObject({ code: 'runtime.session_not_found' });
  });

  it('keeps resolving what the session pinned after the registry learns a newer version', async () => {
    const v1 = tool({ name: 'demo.read', version: '1' }, async () => ({ ok: true, content: [{ type: 'text', text: 'v1' }] }));
    const h = harness({ tools: [v1] });
    const { runId } = await h.open();
    h.registry.registerBuiltin(tool({ name: 'demo.read', version: '2' }, async () => ({ ok: true, content: [{ type: 'text', text: 'v2' }] })));
    const outcome = await h.runtime.submitStep(h.step(runId, 1, [callOf('a', 'demo.read', {})]));
    const part = outcome.items[0]?.content[0];
    expect(part?.type === 'text' && part.text).toContain('v1');
  });
});

describe('submitStep: refusals', () => {
  it('treats another tenant’s run as not found', async () => {
    const h = harness({ tools: [tool({ name: 'demo.read' })] });
    const { runId } = await h.open();
    const other = { tenant_id: 't2', principal_id: 'p2', scopes: [] };
    await expect(h.runtime.submitStep({ tenantId: 't2', runId, stepNumber: 1, principal: other, calls: [callOf('a', 'demo.read', {})] })).rejects.toMatchObject({
      code: 'runtime.run_not_found',
    });
  });

  it('refuses an invalid submission, duplicate call ids, and a different batch under an existing step number', async () => {
    const h = harness({ tools: [tool({ name: 'demo.read' })] });
    const { runId } = await h.open();
    await expect(h.runtime.submitStep(h.step(runId, 1, []))).rejects.toMatchObject({ code: 'runtime.step_invalid' });
    await expect(h.runtime.submitStep(h.step(runId, 1, [callOf('a', 'demo.read', {}), callOf('a', 'demo.read', { n: 1 })]))).rejects.toMatchObject({
      code: 'runtime.step_invalid',
    });
    await h.runtime.submitStep(h.step(runId, 1, [callOf('a', 'demo.read', { n: 1 })]));
    await expect(h.runtime.submitStep(h.step(runId, 1, [callOf('a', 'demo.read', { n: 2 })]))).rejects.toMatchObject({ code: 'runtime.step_conflict' });
  });

  it('refuses a run that is not running', async () => {
    const h = harness({ tools: [tool({ name: 'demo.read' })] });
    const { runId } = await h.open();
    await h.runtime.cancelRun('t1', runId);
    await expect(h.runtime.submitStep(h.step(runId, 1, [callOf('a', 'demo.read', {})]))).rejects.toMatchObject({ code: 'runtime.run_not_active' });
  });

  it('stores the submission on the step row so a later worker can rebuild every request', async () => {
    const h = harness({ tools: [tool({ name: 'demo.read' })] });
    const { runId } = await h.open();
    await h.runtime.submitStep({ ...h.step(runId, 3, [{ ...callOf('a', 'demo.read', { n: 1 }, ['user', 'external_untrusted']), argumentTrust: { n: 'external_untrusted' } }]), callerTimeoutSeconds: 9 });
    const step = await h.stores.steps.get('t1', runId, 3);
    expect(step?.batch).toEqual({
      version: 1,
      principal,
      calls: [{ call_id: 'a', tool_name: 'demo.read', arguments: { n: 1 }, context_trust: ['user', 'external_untrusted'], argument_trust: { n: 'external_untrusted' }, origin: 'model' }],
      caller_timeout_seconds: 9,
    });
  });
});

describe('cancelRun', () => {
  it('cancels the run and fires the cancellation token of its in-flight calls', async () => {
    const hold = gate();
    let cancelled = false;
    const waiting = tool({ name: 'demo.wait' }, async (_args, ctx) => {
      ctx.cancellation.addEventListener('abort', () => {
        cancelled = true;
        hold.release();
      });
      await hold.wait;
      return { ok: true, content: [] };
    });
    const h = harness({ tools: [waiting, tool({ name: 'demo.read' })] });
    const { runId } = await h.open();
    const pending = h.runtime.submitStep(h.step(runId, 1, [callOf('a', 'demo.wait', {}), callOf('b', 'demo.read', { n: 1 }, ['user'])]));
    await delay(5);
    const run = await h.runtime.cancelRun('t1', runId);
    expect(run.status).toBe('cancelled');
    await pending;
    expect(cancelled).toBe(true);
    // Cancelling again is a no-op; a run that failed cannot be cancelled.
    expect((await h.runtime.cancelRun('t1', runId)).status).toBe('cancelled');
    const other = await h.open();
    await h.stores.runs.setStatus('t1', other.runId, 'failed', h.clock.now());
    await expect(h.runtime.cancelRun('t1', other.runId)).rejects.toMatchObject({ code: 'runtime.run_not_active' });
  });

  it('completes a suspended call of the cancelled run as failed with tool.run_cancelled', async () => {
    const h = harness({ tools: [tool({ name: 'demo.read' })] });
    const { runId, sessionId } = await h.open();
    // A control tool's suspension, written as the pipeline would leave it.
    const lease = await h.stores.runs.acquireLease('t1', runId, 'worker-x', 1000, h.clock.now());
    const fence = { runId, fencingToken: lease!.fencingToken };
    const { row } = (await h.stores.invocations.insertIntent(
      't1',
      {
        runId,
        sessionId,
        stepNumber: 1,
        callId: 'ask',
        toolName: 'demo.read',
        toolVersion: '1',
        status: 'authorized',
        idempotencyKey: 'k'.repeat(64),
        argumentsHash: 'h'.repeat(64),
        arguments: {},
        toolSource: 'builtin',
        serverId: null,
        idempotencyClass: 'read_only',
        originTrust: 'user',
        parallelGroup: null,
        createdAt: h.clock.now(),
      },
      [],
    )) as { row: { id: string } };
    await h.stores.invocations.claim('t1', row.id, fence, h.clock.now(), []);
    await h.stores.invocations.suspend('t1', row.id, fence, { kind: 'user_input', ref: 'q1' }, []);
    await h.stores.runs.releaseLease('t1', fence);
    // The sweep leaves a suspended row alone.
    expect((await h.runtime.sweep()).examined).toBe(0);

    await h.runtime.cancelRun('t1', runId);
    expect(await h.stores.invocations.getById('t1', row.id)).toMatchObject({ status: 'failed', reasonCode: 'tool.run_cancelled' });
  });
});

describe('settings', () => {
  it('fills defaults and refuses values below their floor', () => {
    expect(resolveRuntimeSettings({})).toEqual({ leaseTtlMs: 30_000, batchConcurrency: 8, maximumAttempts: 5, inlineMaximumBytes: 4096, sweepBatchSize: 100 });
    expect(() => resolveRuntimeSettings({ inlineMaximumBytes: 1023 })).toThrow(/inlineMaximumBytes/);
    expect(() => resolveRuntimeSettings({ batchConcurrency: 0 })).toThrow(/batchConcurrency/);
  });
});
