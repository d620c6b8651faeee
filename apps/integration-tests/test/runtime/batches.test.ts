import { describe, expect, it } from 'vitest';
import { drivers } from '../../src';
import { callOf, gate, tool, useHarness } from './fixtures';

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(drivers())('runtime batches on %s', (driver) => {
  const harness = useHarness(driver);

  describe('submitStep: admission decides parallel or sequential (§ Parallel calls)', () => {
    it('runs a batch of parallel reads concurrently, under one step and one parallel_group, items in submission order', async () => {
      const started: string[] = [];
      const finished: string[] = [];
      // All three are inside execute at once (none finishes before the last has started), and
      // the first call is the slowest: completion order is the reverse of submission order.
      // Gates, not delays: each call's intent and claim are written before it starts (one
      // transaction at a time on PGlite, racing on PostgreSQL), so the database spreads the starts.
      const allStarted = gate();
      const turns = [gate(), gate(), gate()];
      turns[2]!.release();
      const read = tool({ name: 'demo.read' }, async (args) => {
        const n = Number(args.n);
        const id = String(n);
        started.push(id);
        if (started.length === 3) allStarted.release();
        await allStarted.wait;
        await turns[n]!.wait;
        finished.push(id);
        turns[n - 1]?.release();
        return { ok: true, content: [{ type: 'text', text: `read ${id}` }] };
      });
      const h = await harness({ tools: [read] });
      const { runId } = await h.open();

      const outcome = await h.runtime.submitStep(
        h.step(runId, 1, [callOf('a', 'demo.read', { n: 0 }), callOf('b', 'demo.read', { n: 1 }), callOf('c', 'demo.read', { n: 2 })]),
      );

      expect(outcome.mode).toBe('parallel');
      // Each call writes its own intent and claim before it starts; on a pooled database those
      // round trips race, so the start order is the database's. The items keep submission order.
      expect([...started].sort()).toEqual(['0', '1', '2']);
      expect(finished).toEqual(['2', '1', '0']);
      expect(outcome.items.map((i) => i.call_id)).toEqual(['a', 'b', 'c']);
      expect(outcome.items.map((i) => i.outcome.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
      const rows = await h.stores.invocations.listForRun(h.tenantId, runId);
      expect(rows).toHaveLength(3);
      expect(new Set(rows.map((r) => r.stepNumber))).toEqual(new Set([1]));
      const groups = new Set(rows.map((r) => r.parallelGroup));
      expect(groups.size).toBe(1);
      expect([...groups][0]).toMatch(/^[0-9a-f-]{36}$/);
      expect((await h.stores.steps.get(h.tenantId, runId, 1))?.status).toBe('completed');
    });

    it('runs a mixed batch sequentially in provider order, with parallel_group null', async () => {
      const order: string[] = [];
      const read = tool({ name: 'demo.read' }, async (args) => {
        await delay(5);
        order.push(`read ${String(args.n)}`);
        return { ok: true, content: [] };
      });
      const write = tool(
        { name: 'demo.write', side_effect: 'workspace_write', idempotency: 'idempotent', allow_parallel: false },
        async (args) => {
          order.push(`write ${String(args.n)}`);
          return { ok: true, content: [] };
        },
      );
      const h = await harness({ tools: [read, write] });
      const { runId } = await h.open();

      const outcome = await h.runtime.submitStep(
        h.step(runId, 1, [
          callOf('a', 'demo.read', { n: 1 }),
          callOf('b', 'demo.write', { n: 2, path: 'x' }),
          callOf('c', 'demo.read', { n: 3 }),
        ]),
      );

      expect(outcome.mode).toBe('sequential');
      expect(order).toEqual(['read 1', 'write 2', 'read 3']);
      expect(outcome.items.map((i) => i.call_id)).toEqual(['a', 'b', 'c']);
      const rows = await h.stores.invocations.listForRun(h.tenantId, runId);
      expect(rows.map((r) => r.parallelGroup)).toEqual([null, null, null]);
    });

    it('runs sequentially when a call names a tool the session does not offer, and still answers every call', async () => {
      const h = await harness({ tools: [tool({ name: 'demo.read' })] });
      const { runId } = await h.open();
      const outcome = await h.runtime.submitStep(h.step(runId, 1, [callOf('a', 'demo.read', { n: 1 }), callOf('b', 'demo.nope', {})]));
      expect(outcome.mode).toBe('sequential');
      expect(outcome.items.map((i) => [i.call_id, i.outcome.reason_code])).toEqual([
        ['a', 'tool.ok'],
        ['b', 'policy.matrix.unknown_tool'],
      ]);
      expect((await h.stores.steps.get(h.tenantId, runId, 1))?.status).toBe('completed');
    });

    it('runs a single call sequentially, and a batch over the remaining tool budget sequentially', async () => {
      const h = await harness({ tools: [tool({ name: 'demo.read' })] });
      const single = await h.open();
      expect((await h.runtime.submitStep(h.step(single.runId, 1, [callOf('a', 'demo.read', { n: 1 })]))).mode).toBe('sequential');

      const budgeted = await h.open({ maximumToolCalls: 2 });
      const outcome = await h.runtime.submitStep(
        h.step(budgeted.runId, 1, [
          callOf('a', 'demo.read', { n: 1 }),
          callOf('b', 'demo.read', { n: 2 }),
          callOf('c', 'demo.read', { n: 3 }),
        ]),
      );
      expect(outcome.mode).toBe('sequential');
    });

    it('caps the calls in flight at batchConcurrency; the rest queue rather than fail', async () => {
      let inFlight = 0;
      let peak = 0;
      const slow = tool({ name: 'demo.slow' }, async () => {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await delay(15);
        inFlight -= 1;
        return { ok: true, content: [] };
      });
      const h = await harness({ tools: [slow], settings: { batchConcurrency: 3 } });
      const { runId } = await h.open();
      const calls = Array.from({ length: 7 }, (_, i) => callOf(`c${i}`, 'demo.slow', { n: i }));
      const outcome = await h.runtime.submitStep(h.step(runId, 1, calls));
      expect(outcome.mode).toBe('parallel');
      expect(peak).toBe(3);
      expect(outcome.items.every((i) => i.outcome.status === 'succeeded')).toBe(true);
    });

    it('lets the read-only siblings of a failing read finish', async () => {
      const finished: number[] = [];
      const read = tool({ name: 'demo.read' }, async (args) => {
        const n = Number(args.n);
        if (n === 0) throw new Error('boom');
        await delay(10);
        finished.push(n);
        return { ok: true, content: [] };
      });
      const h = await harness({ tools: [read] });
      const { runId } = await h.open();
      const outcome = await h.runtime.submitStep(
        h.step(runId, 1, [callOf('a', 'demo.read', { n: 0 }), callOf('b', 'demo.read', { n: 1 }), callOf('c', 'demo.read', { n: 2 })]),
      );
      expect(outcome.mode).toBe('parallel');
      expect(outcome.items[0]?.outcome.status).toBe('failed');
      expect(outcome.items.slice(1).map((i) => i.outcome.status)).toEqual(['succeeded', 'succeeded']);
      expect(finished.sort()).toEqual([1, 2]);
    });

    it('returns the recorded outcomes when a step is resubmitted, executing nothing twice', async () => {
      let executions = 0;
      const write = tool(
        { name: 'demo.send', side_effect: 'external_write', idempotency: 'non_idempotent', allow_parallel: false, risk: 'medium' },
        async () => {
          executions += 1;
          return { ok: true, content: [{ type: 'text', text: `sent #${executions}` }] };
        },
      );
      const h = await harness({ tools: [write] });
      const { runId } = await h.open();
      const submission = h.step(runId, 1, [callOf('a', 'demo.send', { n: 1 })]);
      const first = await h.runtime.submitStep(submission);
      const second = await h.runtime.submitStep(submission);
      expect(executions).toBe(1);
      expect(second.items).toEqual(first.items);
      const part = first.items[0]?.content[0];
      expect(part?.type === 'text' && part.text).toContain('sent #1');
    });

    it('keeps the step running while a call waits for approval, and lists it as pending', async () => {
      const write = tool({
        name: 'demo.send',
        side_effect: 'external_write',
        idempotency: 'non_idempotent',
        allow_parallel: false,
        risk: 'medium',
      });
      const h = await harness({ tools: [write, tool({ name: 'demo.read' })] });
      const { runId } = await h.open();
      // Untrusted context: the default profile asks a human before an external write.
      const outcome = await h.runtime.submitStep(
        h.step(runId, 1, [callOf('r', 'demo.read', { n: 1 }), callOf('w', 'demo.send', { n: 1 }, ['external_untrusted'])]),
      );
      expect(outcome.items.map((i) => i.call_id)).toEqual(['r']);
      expect(outcome.pendingApprovals).toHaveLength(1);
      expect(outcome.pendingApprovals[0]?.callId).toBe('w');
      const row = await h.stores.invocations.getById(h.tenantId, outcome.pendingApprovals[0]!.invocationId);
      expect(row?.status).toBe('waiting_for_approval');
      expect((await h.stores.steps.get(h.tenantId, runId, 1))?.status).toBe('running');
    });

    it('holds the run lease while the batch runs and releases it at the end', async () => {
      const hold = gate();
      const entered = gate();
      const h = await harness({
        tools: [
          tool({ name: 'demo.wait' }, async () => {
            entered.release();
            await hold.wait;
            return { ok: true, content: [] };
          }),
        ],
      });
      const { runId } = await h.open();
      const pending = h.runtime.submitStep(h.step(runId, 1, [callOf('a', 'demo.wait', {})]));
      // The call is inside execute (a real store's writes take real time before it gets there).
      await entered.wait;
      const during = await h.stores.runs.get(h.tenantId, runId);
      expect(during?.leaseOwner).toBe('worker-main');
      // Another worker cannot take the run while the lease is live.
      await expect(h.worker('worker-b').submitStep(h.step(runId, 2, [callOf('b', 'demo.wait', {})]))).rejects.toMatchObject({
        code: 'runtime.run_busy',
        retryable: true,
      });
      // Nor can a second task of this process.
      await expect(h.runtime.submitStep(h.step(runId, 2, [callOf('b', 'demo.wait', {})]))).rejects.toMatchObject({
        code: 'runtime.run_busy',
      });
      hold.release();
      await pending;
      const after = await h.stores.runs.get(h.tenantId, runId);
      expect(after?.leaseOwner).toBeNull();
    });
  });
});
