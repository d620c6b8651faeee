import { describe, expect, it } from 'vitest';
import { drivers } from '../../src';
import type { PipelineStepNumber } from '@veetbot/executor';
import type { PolicyDecision, ProposedAction, ToolSpec, Principal } from '@veetbot/domain';
import type { PolicyEngine } from '@veetbot/ports';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { callOf, gate, readIntent, tool, useHarness } from './fixtures';

/** The default profile, until `revoked` is set: then every call is denied (authority withdrawn). */
class RevocablePolicy implements PolicyEngine {
  revoked = false;
  readonly #inner = new DefaultPolicyEngine();
  evaluate(action: ProposedAction): PolicyDecision {
    return this.revoked
      ? { effect: 'deny', reason_code: 'policy.rule.denied', rule_id: 'revoked', policy_version: 'test@revoked' }
      : this.#inner.evaluate(action);
  }
  offers(spec: ToolSpec, principal: Principal): boolean {
    return this.#inner.offers(spec, principal);
  }
}

const dieAt = (step: PipelineStepNumber) => ({
  onStep: async (n: PipelineStepNumber) => {
    if (n === step) throw new Error('worker died');
  },
});

describe.each(drivers())('runtime sweep on %s', (driver) => {
  const harness = useHarness(driver, { databasePerTest: true });

  describe('sweep (§ The effect watermark; § Deduplication, rule 4)', () => {
    it('leaves a RUNNING row alone while its worker holds a live lease, and recovers it once the lease expires', async () => {
      let executions = 0;
      const hold = gate();
      const entered = gate();
      const read = tool({ name: 'demo.read' }, async () => {
        executions += 1;
        entered.release();
        if (executions === 1) await hold.wait;
        return { ok: true, content: [] };
      });
      const h = await harness({ tools: [read], settings: { leaseTtlMs: 60_000 } });
      const { runId } = await h.open();
      const workerA = h.worker('worker-a');
      const stuck = workerA.submitStep(h.step(runId, 1, [callOf('a', 'demo.read', { n: 1 })]));
      // The call is RUNNING: inside execute (a real store's writes take real time before it gets there).
      await entered.wait;

      const sweeper = h.worker('worker-b');
      expect(await sweeper.sweep()).toEqual({ examined: 0, recovered: 0, uncertain: 0, failed: 0, skipped: 0 });

      h.clock.advance(60_001);
      const report = await sweeper.sweep();
      expect(report).toEqual({ examined: 1, recovered: 1, uncertain: 0, failed: 0, skipped: 0 });
      expect(executions).toBe(2);
      const [row] = await h.stores.invocations.listForRun(h.tenantId, runId);
      expect(row).toMatchObject({ status: 'succeeded', attemptNumber: 2 });
      expect((await h.stores.steps.get(h.tenantId, runId, 1))?.status).toBe('completed');

      // Worker A comes back: its lease was taken, so its write is refused, not applied twice.
      hold.release();
      await expect(stuck).rejects.toMatchObject({ code: 'store.fenced' });
      expect((await h.stores.invocations.listForRun(h.tenantId, runId))[0]).toMatchObject({ status: 'succeeded', attemptNumber: 2 });
    });

    it('puts a step whose worker died before reaching some of its calls back to pending, so the queue claims it again', async () => {
      const read = tool({ name: 'demo.read', allow_parallel: false });
      const h = await harness({ tools: [read] });
      const { runId } = await h.open();
      // A sequential batch; the worker dies inside the first call: the other two never start.
      const calls = [callOf('a', 'demo.read', { n: 1 }), callOf('b', 'demo.read', { n: 2 }), callOf('c', 'demo.read', { n: 3 })];
      await expect(h.worker('a', { hooks: dieAt(11) }).submitStep(h.step(runId, 1, calls))).rejects.toThrow('worker died');
      expect((await h.stores.steps.get(h.tenantId, runId, 1))?.status).toBe('running');

      const report = await h.worker('b').sweep();
      expect(report).toMatchObject({ examined: 1, recovered: 1 });
      // The started call is settled; the step is claimable again for the two that never ran.
      expect((await h.stores.invocations.listForRun(h.tenantId, runId)).map((r) => [r.callId, r.status])).toEqual([['a', 'succeeded']]);
      expect((await h.stores.steps.get(h.tenantId, runId, 1))?.status).toBe('pending');

      // Resubmitted (as a worker that claims it does), every call ends; 'a' is not run again.
      const outcome = await h.worker('c').submitStep(h.step(runId, 1, calls));
      expect(outcome.items.map((i) => [i.call_id, i.outcome.status])).toEqual([
        ['a', 'succeeded'],
        ['b', 'succeeded'],
        ['c', 'succeeded'],
      ]);
      expect((await h.stores.steps.get(h.tenantId, runId, 1))?.status).toBe('completed');
    });

    it('ends a call that keeps crashing its worker as FAILED tool.recovery_exhausted after maximumAttempts', async () => {
      let executions = 0;
      const read = tool({ name: 'demo.read' }, async () => {
        executions++;
        return { ok: true, content: [] };
      });
      const h = await harness({ tools: [read], settings: { maximumAttempts: 2 } });
      const { runId } = await h.open();
      // Every worker dies at step 11, after the tool ran.
      await expect(h.worker('a', { hooks: dieAt(11) }).submitStep(h.step(runId, 1, [callOf('c', 'demo.read', { n: 1 })]))).rejects.toThrow(
        'worker died',
      );
      const crashingSweeper = h.worker('b', { hooks: dieAt(11), settings: { maximumAttempts: 2 } });
      expect(await crashingSweeper.sweep()).toMatchObject({ examined: 1, skipped: 1 });
      expect((await h.stores.invocations.listForRun(h.tenantId, runId))[0]).toMatchObject({ status: 'running', attemptNumber: 2 });

      const report = await h.worker('c', { settings: { maximumAttempts: 2 } }).sweep();
      expect(report).toEqual({ examined: 1, recovered: 0, uncertain: 0, failed: 1, skipped: 0 });
      expect(executions).toBe(2);
      expect((await h.stores.invocations.listForRun(h.tenantId, runId))[0]).toMatchObject({
        status: 'failed',
        reasonCode: 'tool.recovery_exhausted',
      });
    });

    it('does not re-run a call of a cancelled run: it ends tool.run_cancelled, or UNCERTAIN if the effect may have escaped', async () => {
      let reads = 0;
      let sends = 0;
      const read = tool({ name: 'demo.read' }, async () => {
        reads++;
        return { ok: true, content: [] };
      });
      const send = tool(
        { name: 'demo.send', side_effect: 'external_write', risk: 'medium', idempotency: 'non_idempotent', allow_parallel: false },
        async () => {
          sends++;
          return { ok: true, content: [] };
        },
      );
      const h = await harness({ tools: [read, send] });
      const { runId } = await h.open();
      await expect(
        h
          .worker('a', { hooks: dieAt(11) })
          .submitStep(h.step(runId, 1, [callOf('r', 'demo.read', { n: 1 }), callOf('s', 'demo.send', { n: 1 })])),
      ).rejects.toThrow();
      // Sequential batch: the worker died in the first call; the second never started.
      await expect(
        h.worker('a2', { hooks: dieAt(11) }).submitStep(h.step(runId, 2, [callOf('s', 'demo.send', { n: 1 })])),
      ).rejects.toThrow();
      await h.runtime.cancelRun(h.tenantId, runId);

      const report = await h.worker('b').sweep();
      expect(report).toMatchObject({ examined: 2, uncertain: 1, failed: 1 });
      expect(reads).toBe(1);
      expect(sends).toBe(1);
      const rows = await h.stores.invocations.listForRun(h.tenantId, runId);
      expect(rows.map((r) => [r.stepNumber, r.callId, r.status, r.reasonCode])).toEqual([
        [1, 'r', 'failed', 'tool.run_cancelled'],
        [2, 's', 'uncertain', 'tool.outcome_unknown'],
      ]);
    });

    it('skips a row whose step has no stored batch (not submitted through the runtime)', async () => {
      const h = await harness({ tools: [tool({ name: 'demo.read' })] });
      const { runId, sessionId } = await h.open();
      const lease = await h.stores.runs.acquireLease(h.tenantId, runId, 'elsewhere', 10, h.clock.now());
      const fence = { runId, fencingToken: lease!.fencingToken };
      const inserted = await h.stores.invocations.insertIntent(
        h.tenantId,
        readIntent(h.clock.now(), {
          runId,
          sessionId,
          stepNumber: 9,
          callId: 'x',
          idempotencyKey: 'a'.repeat(64),
          argumentsHash: 'b'.repeat(64),
        }),
        [],
      );
      if (!inserted.inserted) throw new Error('expected a new row');
      await h.stores.invocations.claim(h.tenantId, inserted.row.id, fence, h.clock.now(), []);
      h.clock.advance(11);
      expect(await h.runtime.sweep()).toEqual({ examined: 1, recovered: 0, uncertain: 0, failed: 0, skipped: 1 });
    });

    it('ends a RUNNING row whose authority was withdrawn: UNCERTAIN if the effect may have escaped, else the denial', async () => {
      let sends = 0;
      let reads = 0;
      const send = tool(
        { name: 'demo.send', side_effect: 'external_write', risk: 'medium', idempotency: 'non_idempotent', allow_parallel: false },
        async () => {
          sends++;
          return { ok: true, content: [] };
        },
      );
      const read = tool({ name: 'demo.read' }, async () => {
        reads++;
        return { ok: true, content: [] };
      });
      const policy = new RevocablePolicy();
      const h = await harness({ tools: [send, read], policy });
      const { runId } = await h.open();
      // The send died after its watermark; the read died before it started.
      await expect(
        h.worker('a', { hooks: dieAt(11) }).submitStep(h.step(runId, 1, [callOf('s', 'demo.send', { n: 1 })])),
      ).rejects.toThrow();
      await expect(
        h.worker('a2', { hooks: dieAt(10) }).submitStep(h.step(runId, 2, [callOf('r', 'demo.read', { n: 1 })])),
      ).rejects.toThrow();
      policy.revoked = true;

      expect(await h.worker('b').sweep()).toEqual({ examined: 2, recovered: 0, uncertain: 1, failed: 1, skipped: 0 });
      expect(sends).toBe(1);
      expect(reads).toBe(0);
      const rows = await h.stores.invocations.listForRun(h.tenantId, runId);
      expect(rows.map((r) => [r.callId, r.status, r.reasonCode])).toEqual([
        ['s', 'uncertain', 'tool.outcome_unknown'],
        ['r', 'denied', 'policy.rule.denied'],
      ]);
      expect(await h.worker('c').sweep()).toMatchObject({ examined: 0 });
    });
  });
});
