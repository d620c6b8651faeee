import { describe, expect, it } from 'vitest';
import { drivers } from '../../src';
import { callOf, tool, useHarness } from './fixtures';

/**
 * docs/adr/0020 on the in-memory stores (the PostgreSQL half is
 * apps/integration-tests/test/runtime-refusals-budgets.test.ts): what the runtime refuses
 * before dispatch, in which order, and that hostile arguments never break a step.
 */
describe.each(drivers())('runtime refusals budgets on %s', (driver) => {
  const harness = useHarness(driver);

  describe('submitStep: refusals before dispatch (docs/adr/0020)', () => {
    it('five different invalid argument sets are five breaker keys; five identical ones trip the breaker', async () => {
      const h = await harness({ tools: [tool({ name: 'demo.read' })] });
      const { runId } = await h.open();
      for (let step = 1; step <= 5; step++) {
        const outcome = await h.runtime.submitStep(h.step(runId, step, [callOf(`c${step}`, 'demo.read', { n: `x${step}` })]));
        expect(outcome).toMatchObject({ runFailed: null, synthesisOnly: false });
      }
      const other = await h.open();
      for (let step = 1; step <= 4; step++)
        await h.runtime.submitStep(h.step(other.runId, step, [callOf(`c${step}`, 'demo.read', { n: 'same' })]));
      const fifth = await h.runtime.submitStep(h.step(other.runId, 5, [callOf('c5', 'demo.read', { n: 'same' })]));
      expect(fifth.items[0]?.outcome.reason_code).toBe('tool.loop_detected');
      expect(await h.stores.runs.get(h.tenantId, other.runId)).toMatchObject({ status: 'failed', failureReason: 'tool.loop_detected' });
    });

    it('the breakers come before the deadline, the deadline before the budget', async () => {
      let executions = 0;
      const h = await harness({
        tools: [
          tool({ name: 'demo.read' }, async () => {
            executions++;
            return { ok: true, content: [] };
          }),
        ],
      });
      const budgetAndDeadline = await h.open({ maximumToolCalls: 0, deadlineInMs: 1000 });
      h.clock.advance(1000);
      const late = await h.runtime.submitStep(h.step(budgetAndDeadline.runId, 1, [callOf('a', 'demo.read', { n: 1 })]));
      expect(late.items[0]?.outcome.reason_code).toBe('run.deadline_exceeded');
      expect(await h.stores.runs.get(h.tenantId, budgetAndDeadline.runId)).toMatchObject({
        status: 'failed',
        failureReason: 'run.deadline_exceeded',
      });

      const loopAndDeadline = await h.open({ deadlineInMs: 10_000 });
      for (let step = 1; step <= 4; step++)
        await h.runtime.submitStep(h.step(loopAndDeadline.runId, step, [callOf(`c${step}`, 'demo.read', { n: 1 })]));
      h.clock.advance(10_000);
      const fifth = await h.runtime.submitStep(h.step(loopAndDeadline.runId, 5, [callOf('c5', 'demo.read', { n: 1 })]));
      expect(fifth.items[0]?.outcome.reason_code).toBe('tool.loop_detected');
      expect(await h.stores.runs.get(h.tenantId, loopAndDeadline.runId)).toMatchObject({
        status: 'failed',
        failureReason: 'tool.loop_detected',
      });
      expect(executions).toBe(4);
    });

    it('a sequential batch that outlives the deadline stops there: later calls end run.deadline_exceeded', async () => {
      const h = await harness({ tools: [] });
      h.registry.registerBuiltins([
        tool(
          { name: 'demo.slow', allow_parallel: false, side_effect: 'external_write', risk: 'medium', idempotency: 'idempotent' },
          async () => {
            h.clock.advance(60_000);
            return { ok: true, content: [] };
          },
        ),
      ]);
      const { runId } = await h.open({ deadlineInMs: 60_000 });
      const outcome = await h.runtime.submitStep(
        h.step(runId, 1, [callOf('a', 'demo.slow', { n: 1 }), callOf('b', 'demo.slow', { n: 2 })]),
      );
      expect(outcome.mode).toBe('sequential');
      expect(outcome.items.map((i) => i.outcome.reason_code)).toEqual(['tool.ok', 'run.deadline_exceeded']);
      expect(outcome.runFailed).toBe('deadline_exceeded');
    });

    // ADR 0019 (with 0020): what no store can hold or no walk may recurse into — deeper than the
    // nesting limit, -0, a lone surrogate — is refused for the whole batch before anything is
    // stored, naming the field, as the api refuses the same body with 400; arguments that can be
    // stored but fail validation are the unvalidated record's (the tests above).
    it.each([
      [
        'deeper than the nesting limit',
        (() => {
          let deep: unknown = 1;
          for (let i = 0; i < 1_000; i++) deep = { n: deep };
          return deep;
        })(),
        'calls.0.arguments.n',
      ],
      ['-0', { n: -0, x: 1 }, 'calls.0.arguments.n'],
      ['a lone surrogate', { path: '\ud800', x: 1 }, 'calls.0.arguments.path'],
    ])(
      'hostile arguments in an in-process submission (%s): runtime.step_invalid naming the field, nothing stored',
      async (_name, args, at) => {
        const h = await harness({ tools: [tool({ name: 'demo.read' })] });
        const { runId } = await h.open();
        const submitted = h.runtime.submitStep(h.step(runId, 1, [callOf('hostile', 'demo.read', args)]));
        await expect(submitted).rejects.toMatchObject({ code: 'runtime.step_invalid' });
        await expect(submitted).rejects.toThrow(at);
        expect(await h.stores.invocations.listForRun(h.tenantId, runId)).toEqual([]);
      },
    );
  });
});
