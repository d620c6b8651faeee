import { describe, expect, it } from 'vitest';
import { drivers } from '../../src';
import type { PipelineStepNumber } from '@veetbot/executor';
import { callOf, tool, useHarness } from './fixtures';

/** HIGH-risk write: the default profile denies it from an EXTERNAL_UNTRUSTED origin. */
const risky = tool({
  name: 'demo.wipe',
  side_effect: 'external_write',
  risk: 'high',
  idempotency: 'non_idempotent',
  allow_parallel: false,
});

describe.each(drivers())('runtime breakers on %s', (driver) => {
  const harness = useHarness(driver);

  describe('submitStep: the circuit breakers (§ The circuit breakers)', () => {
    it('arms the synthesis-only turn after the second identical denial: the third proposal fails with ToolLoopDetected', async () => {
      const h = await harness({ tools: [risky] });
      const { runId } = await h.open();
      const denied = (step: number) =>
        h.runtime.submitStep(h.step(runId, step, [callOf(`c${step}`, 'demo.wipe', { n: 1 }, ['external_untrusted'])]));

      const first = await denied(1);
      expect(first.items[0]?.outcome.reason_code).toBe('policy.rule.denied');
      expect(first).toMatchObject({ runFailed: null, synthesisOnly: false });

      const second = await denied(2);
      expect(second).toMatchObject({ runFailed: null, synthesisOnly: true });

      // § Answer before the limit: any tool returned during the synthesis-only turn fails with
      // ToolLoopDetected before dispatch.
      const third = await denied(3);
      expect(third.runFailed).toBe('tool_loop_detected');
      expect(third.items[0]?.outcome).toMatchObject({ status: 'failed', reason_code: 'tool.loop_detected' });
      expect(await h.stores.runs.get(h.tenantId, runId)).toMatchObject({ status: 'failed', failureReason: 'tool.loop_detected' });
      await expect(denied(4)).rejects.toMatchObject({ code: 'runtime.run_not_active' });
    });

    it('fails the run with ToolPolicyDenied on three identical denied proposals in one batch', async () => {
      const h = await harness({ tools: [risky] });
      const { runId } = await h.open();
      const calls = [1, 2, 3].map((i) => callOf(`c${i}`, 'demo.wipe', { n: 1 }, ['external_untrusted']));
      const outcome = await h.runtime.submitStep(h.step(runId, 1, calls));
      expect(outcome.runFailed).toBe('tool_policy_denied');
      expect(outcome.items.map((i) => i.outcome.reason_code)).toEqual(['policy.rule.denied', 'policy.rule.denied', 'policy.rule.denied']);
      expect(await h.stores.runs.get(h.tenantId, runId)).toMatchObject({
        status: 'failed',
        failureReason: 'policy.breaker.repeated_denial',
      });
    });

    it('does not count denials of different arguments as identical', async () => {
      const h = await harness({ tools: [risky] });
      const { runId } = await h.open();
      for (let step = 1; step <= 3; step++) {
        const outcome = await h.runtime.submitStep(
          h.step(runId, step, [callOf(`c${step}`, 'demo.wipe', { n: step }, ['external_untrusted'])]),
        );
        expect(outcome.runFailed).toBeNull();
      }
      expect((await h.stores.runs.get(h.tenantId, runId))?.status).toBe('running');
    });

    it('detects the fifth identical call as a loop before dispatch; synthesis-only after the fourth', async () => {
      let executions = 0;
      const h = await harness({
        tools: [
          tool({ name: 'demo.read' }, async () => {
            executions++;
            return { ok: true, content: [] };
          }),
        ],
      });
      const { runId } = await h.open();
      const same = (step: number) => h.runtime.submitStep(h.step(runId, step, [callOf(`c${step}`, 'demo.read', { n: 7 })]));

      for (let step = 1; step <= 3; step++) expect((await same(step)).synthesisOnly).toBe(false);
      expect((await same(4)).synthesisOnly).toBe(true);

      const fifth = await same(5);
      expect(fifth.runFailed).toBe('tool_loop_detected');
      expect(fifth.items[0]?.outcome).toMatchObject({ status: 'failed', reason_code: 'tool.loop_detected' });
      expect(executions).toBe(4);
      expect((await h.stores.runs.get(h.tenantId, runId))?.status).toBe('failed');
      // The refusal is on the record (the audit trail and a replay of the breaker read it).
      const rows = await h.stores.invocations.listForRun(h.tenantId, runId);
      expect(rows.at(-1)).toMatchObject({ stepNumber: 5, status: 'failed', reasonCode: 'tool.loop_detected' });
    });

    it('rejects a whole batch that already reaches the loop threshold: nothing in it executes', async () => {
      let executions = 0;
      const h = await harness({
        tools: [
          tool({ name: 'demo.read' }, async () => {
            executions++;
            return { ok: true, content: [] };
          }),
          tool({ name: 'demo.other' }),
        ],
      });
      const { runId } = await h.open();
      const calls = [
        ...Array.from({ length: 5 }, (_, i) => callOf(`same${i}`, 'demo.read', { n: 1 })),
        callOf('other', 'demo.other', { n: 2 }),
      ];
      const outcome = await h.runtime.submitStep(h.step(runId, 1, calls));
      expect(executions).toBe(0);
      expect(outcome.runFailed).toBe('tool_loop_detected');
      expect(outcome.items.map((i) => i.outcome.reason_code)).toEqual([
        'tool.run_cancelled',
        'tool.run_cancelled',
        'tool.run_cancelled',
        'tool.run_cancelled',
        'tool.loop_detected',
        'tool.run_cancelled',
      ]);
      expect((await h.stores.steps.get(h.tenantId, runId, 1))?.status).toBe('completed');
    });

    it('denies a call identical to one that ended UNCERTAIN, and never runs it again', async () => {
      let executions = 0;
      const send = tool(
        { name: 'demo.send', side_effect: 'external_write', risk: 'medium', idempotency: 'non_idempotent', allow_parallel: false },
        async () => {
          executions += 1;
          return { ok: true, content: [] };
        },
      );
      const h = await harness({ tools: [send] });
      const { runId } = await h.open();

      // Worker A sends (the watermark commits before the tool runs) and dies before step 13.
      const crash = async (n: PipelineStepNumber) => {
        if (n === 11) throw new Error('worker A died');
      };
      const workerA = h.worker('worker-a', { hooks: { onStep: crash } });
      await expect(workerA.submitStep(h.step(runId, 1, [callOf('c1', 'demo.send', { n: 1 })]))).rejects.toThrow('worker A died');
      expect(executions).toBe(1);

      // Recovery: non-idempotent with effect_sent_at set is UNCERTAIN.
      const report = await h.worker('worker-b').sweep();
      expect(report).toMatchObject({ examined: 1, uncertain: 1 });

      const repeat = await h.runtime.submitStep(h.step(runId, 2, [callOf('c2', 'demo.send', { n: 1 })]));
      expect(repeat.items[0]?.outcome).toMatchObject({
        status: 'denied',
        reason_code: 'policy.breaker.uncertain_repeat',
        retryable: false,
      });
      expect(executions).toBe(1);
      // Different arguments are a different call.
      const other = await h.runtime.submitStep(h.step(runId, 3, [callOf('c3', 'demo.send', { n: 2 })]));
      expect(other.items[0]?.outcome.status).toBe('succeeded');
      expect(executions).toBe(2);
    });

    it('replays the breaker from the rows: a step resubmitted later counts its calls once', async () => {
      const h = await harness({ tools: [tool({ name: 'demo.read' })] });
      const { runId } = await h.open();
      const s1 = h.step(runId, 1, [callOf('c1', 'demo.read', { n: 7 })]);
      await h.runtime.submitStep(s1);
      await h.runtime.submitStep(h.step(runId, 2, [callOf('c2', 'demo.read', { n: 7 })]));
      await h.runtime.submitStep(h.step(runId, 3, [callOf('c3', 'demo.read', { n: 7 })]));
      // Resubmitting step 1 three times does not inch the count toward five.
      for (let i = 0; i < 3; i++) expect((await h.runtime.submitStep(s1)).runFailed).toBeNull();
      const fourth = await h.runtime.submitStep(h.step(runId, 4, [callOf('c4', 'demo.read', { n: 7 })]));
      expect(fourth).toMatchObject({ runFailed: null, synthesisOnly: true });
    });
  });
});
