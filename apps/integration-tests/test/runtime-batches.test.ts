import { describe, expect, it } from 'vitest';
import { drivers } from '../src';
import { useRuntimeScene, userCall } from './runtime-harness';

/**
 * § Parallel calls, and what a step actually is — through the runtime, on a real database:
 * one step_number and one parallel_group for a parallel batch, provider order for a
 * sequential one, the concurrency cap, siblings that outlive a failure, resubmission that
 * never executes twice, and a step that ends only when every call has a terminal row.
 */
describe.each(drivers())('runtime batches on %s', (driver) => {
  const scene = useRuntimeScene(driver);

  it('runs a batch of reads in parallel: one step_number, one parallel_group', async () => {
    const s = scene();
    const { runId } = await s.openRun();
    const outcome = await s.runtime.submitStep(
      s.step(runId, 1, [
        userCall('a', 'math.evaluate', { expression: '6 * 7' }),
        userCall('b', 'workspace.list', {}),
        userCall('c', 'demo.rt_read', { n: 1 }),
      ]),
    );
    expect(outcome.mode).toBe('parallel');
    expect(outcome.items.map((i) => [i.call_id, i.outcome.status])).toEqual([
      ['a', 'succeeded'],
      ['b', 'succeeded'],
      ['c', 'succeeded'],
    ]);
    const rows = await s.stores.invocations.listForRun(s.tenantId, runId);
    expect(rows).toHaveLength(3);
    expect(rows.every((r) => r.stepNumber === 1)).toBe(true);
    const groups = new Set(rows.map((r) => r.parallelGroup));
    expect(groups.size).toBe(1);
    expect([...groups][0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    // The tool events carry the group too.
    const events = await s.stores.events.listAfter(s.tenantId, runId, 0, 1000);
    expect(new Set(events.map((e) => e.payload.parallel_group))).toEqual(groups);
    expect((await s.stores.steps.get(s.tenantId, runId, 1))?.status).toBe('completed');
  });

  it('runs a mixed batch sequentially in provider order, with parallel_group null', async () => {
    const s = scene();
    const { runId } = await s.openRun();
    const outcome = await s.runtime.submitStep(
      s.step(runId, 1, [
        userCall('w', 'workspace.write_text', { path: 'notes.txt', text: 'first' }),
        userCall('r', 'workspace.read_text', { path: 'notes.txt' }),
        userCall('x', 'demo.external_write', { line: 'hello' }),
      ]),
    );
    expect(outcome.mode).toBe('sequential');
    expect(outcome.items.map((i) => [i.call_id, i.outcome.status])).toEqual([
      ['w', 'succeeded'],
      ['r', 'succeeded'],
      ['x', 'succeeded'],
    ]);
    // The read ran after the write: it saw the file.
    expect(outcome.items[1]?.structured).toMatchObject({ path: 'notes.txt', total_bytes: 5 });
    const rows = await s.stores.invocations.listForRun(s.tenantId, runId);
    expect(rows.map((r) => r.parallelGroup)).toEqual([null, null, null]);
    // Strictly one after another: each call ended (in the event log's order) before the next began.
    const events = await s.stores.events.listAfter(s.tenantId, runId, 0, 1000);
    const lifecycle = events
      .filter((e) => e.type === 'tool.call.started' || e.type === 'tool.call.completed')
      .map((e) => `${e.type.slice(10)} ${String(e.payload.call_id)}`);
    expect(lifecycle).toEqual(['started w', 'completed w', 'started r', 'completed r', 'started x', 'completed x']);
    expect(await s.outboxLines()).toHaveLength(1);
  });

  it('observes the concurrency cap: nine slow reads with cap 8 never have more than 8 in flight', async () => {
    const s = scene();
    const { runId } = await s.openRun();
    const probe = s.probes['demo.rt_read'];
    // Each call waits until eight are in flight (or 5 s pass): if the calls did not overlap,
    // the peak would stay below 8; if the cap were not applied, the ninth would make it 9.
    let opened = false;
    const waiters: (() => void)[] = [];
    probe.during = () =>
      new Promise<void>((resolve) => {
        if (opened || probe.inFlight >= 8) {
          opened = true;
          for (const wake of waiters.splice(0)) wake();
          resolve();
          return;
        }
        waiters.push(resolve);
        setTimeout(resolve, 5000).unref();
      });
    const calls = Array.from({ length: 9 }, (_, i) => userCall(`c${i}`, 'demo.rt_read', { n: i }));
    const outcome = await s.runtime.submitStep(s.step(runId, 1, calls));
    expect(outcome.mode).toBe('parallel');
    expect(outcome.items.every((i) => i.outcome.status === 'succeeded')).toBe(true);
    expect(probe.peak).toBe(8);
    // The ninth queued: it started only after one of the first eight finished.
    const firstFinish = Math.min(...probe.finishes.map((f) => f.at));
    expect(probe.starts[8]!.at).toBeGreaterThanOrEqual(firstFinish);
  });

  it('lets the siblings of a failing read finish, uncancelled', async () => {
    const s = scene();
    const { runId } = await s.openRun();
    const probe = s.probes['demo.rt_read'];
    probe.during = async (args) => {
      if (args.fail !== true) await new Promise((resolve) => setTimeout(resolve, 50));
    };
    const outcome = await s.runtime.submitStep(
      s.step(runId, 1, [
        userCall('a', 'demo.rt_read', { n: 1 }),
        userCall('b', 'demo.rt_read', { n: 2, fail: true }),
        userCall('c', 'demo.rt_read', { n: 3 }),
      ]),
    );
    expect(outcome.mode).toBe('parallel');
    expect(outcome.items.map((i) => [i.call_id, i.outcome.status])).toEqual([
      ['a', 'succeeded'],
      ['b', 'failed'],
      ['c', 'succeeded'],
    ]);
    expect(probe.starts.filter((st) => st.args.fail !== true).every((st) => !st.context.cancellation.aborted)).toBe(true);
  });

  it('returns the recorded outcomes when the same step is resubmitted: the outbox has one line', async () => {
    const s = scene();
    const { runId } = await s.openRun();
    const submission = s.step(runId, 1, [
      userCall('x', 'demo.external_write', { line: 'exactly once' }),
      userCall('r', 'demo.rt_read', { n: 1 }),
    ]);
    const first = await s.runtime.submitStep(submission);
    // Another worker, after this one let go, gets the same answers and executes nothing.
    const second = await s.worker('worker-b').submitStep(submission);
    expect(second.items).toEqual(first.items);
    expect(await s.outboxLines()).toHaveLength(1);
    expect(s.probes['demo.rt_read'].executions).toBe(1);
    expect(await s.stores.invocations.listForRun(s.tenantId, runId)).toHaveLength(2);
  });

  it('ends the step only when every call has a terminal row', async () => {
    const s = scene();
    const { runId } = await s.openRun();
    // The write's turn saw untrusted content: the default profile asks a human first.
    const submission = s.step(runId, 1, [
      userCall('r', 'demo.rt_read', { n: 1 }),
      {
        callId: 'x',
        toolName: 'demo.external_write',
        arguments: { line: 'after approval' },
        contextTrust: ['external_untrusted' as const],
      },
    ]);
    const first = await s.runtime.submitStep(submission);
    expect(first.items.map((i) => i.call_id)).toEqual(['r']);
    expect(first.pendingApprovals.map((p) => p.callId)).toEqual(['x']);
    expect((await s.stores.steps.get(s.tenantId, runId, 1))?.status).toBe('running');
    expect(await s.outboxLines()).toHaveLength(0);

    const approval = await s.stores.approvals.getByInvocation(s.tenantId, first.pendingApprovals[0]!.invocationId);
    await s.stores.approvals.decide(
      s.tenantId,
      approval!.id,
      { decision: 'approved', decidedBy: 'approver-1', decidedAt: s.clock.now() },
      [],
    );

    const second = await s.runtime.submitStep(submission);
    expect(second.pendingApprovals).toEqual([]);
    expect(second.items.map((i) => [i.call_id, i.outcome.status])).toEqual([
      ['r', 'succeeded'],
      ['x', 'succeeded'],
    ]);
    expect((await s.stores.steps.get(s.tenantId, runId, 1))?.status).toBe('completed');
    expect(await s.outboxLines()).toHaveLength(1);
    expect(s.probes['demo.rt_read'].executions).toBe(1);
  });
});
