import { DefaultEgressPolicy } from '@veetbot/mcp-adapter';
import { createWebFetchTool } from '@veetbot/tools-builtin';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drivers } from '../../src';
import { html, WebPageServer } from '../../src/web-pages';
import { callOf, type Harness, tool, useHarness } from './fixtures';

/**
 * Issue 29 item 3 (docs/adr/0078): § New evidence across steps, through Runtime.submitStep on
 * the real stores. Each step is one call; the steps alternate between two workers, so every
 * opening reads the earlier steps' tally AND the run's breaker evidence from the database (a
 * worker holds only the tally of the step it ran itself); a one-worker run exercises the held
 * ledger (ADR 0049) instead. Both must decide as one counter would.
 */
let pages: WebPageServer;
beforeAll(async () => {
  pages = await WebPageServer.start();
});
afterAll(async () => {
  await pages.close();
});

/** demo.page: a read whose result carries the evidence key `keyOf(n)` on its n-th execution. */
function pageTool(keyOf: (n: number) => string) {
  let executions = 0;
  return tool({ name: 'demo.page' }, async () => {
    executions += 1;
    return { ok: true, content: [{ type: 'text', text: `page ${executions}` }], evidence_key: keyOf(executions) };
  });
}

async function observeUntilRefused(h: Harness, runId: string, alternate: boolean, args: unknown = { n: 1 }, from = 1, limit = 60) {
  const workers = [h.runtime, h.worker('worker-two')];
  let observed = 0;
  let synthesisOnlyAfter: number | null = null;
  for (let step = from; step < from + limit; step++) {
    const runtime = alternate ? workers[step % 2]! : h.runtime;
    const outcome = await runtime.submitStep(h.step(runId, step, [callOf(`c${step}`, 'demo.page', args)]));
    const item = outcome.items[0]!;
    if (item.outcome.status !== 'succeeded')
      return { observed, refused: item.outcome.reason_code, runFailed: outcome.runFailed, synthesisOnlyAfter };
    observed += 1;
    if (outcome.synthesisOnly && synthesisOnlyAfter === null) synthesisOnlyAfter = observed;
  }
  return { observed, refused: null, runFailed: null, synthesisOnlyAfter };
}

describe.each(drivers())('breaker evidence across steps on %s', (driver) => {
  const harness = useHarness(driver);

  it.each([
    ['two workers: every step reads the evidence from the store', true],
    ['one worker: the held ledger carries it', false],
  ])('a page that changes on every observation allows 36 identical observations (%s)', async (_what, alternate) => {
    const h = await harness({ tools: [pageTool((n) => `page-${n}`)] });
    const { runId } = await h.open();
    const result = await observeUntilRefused(h, runId, alternate);
    expect(result).toEqual({ observed: 36, refused: 'tool.loop_detected', runFailed: 'tool_loop_detected', synthesisOnlyAfter: 36 });
    expect(await h.stores.runs.get(h.tenantId, runId)).toMatchObject({ status: 'failed', failureReason: 'tool.loop_detected' });
  });

  it('five identical calls returning the same page trip the loop breaker across steps', async () => {
    const h = await harness({ tools: [pageTool(() => 'same-page')] });
    const { runId } = await h.open();
    expect(await observeUntilRefused(h, runId, true)).toEqual({
      observed: 4,
      refused: 'tool.loop_detected',
      runFailed: 'tool_loop_detected',
      synthesisOnlyAfter: 4,
    });
  });

  it('the 32 restarts are counted per run across calls and steps: another call then counts plainly', async () => {
    const h = await harness({ tools: [pageTool((n) => `page-${n}`)] });
    const { runId } = await h.open();
    const workers = [h.runtime, h.worker('worker-two')];
    // 33 observations of one call spend the run's 32 restarts (the first observation restarts nothing).
    for (let step = 1; step <= 33; step++) {
      const outcome = await workers[step % 2]!.submitStep(h.step(runId, step, [callOf(`c${step}`, 'demo.page', { n: 1 })]));
      expect(outcome.items[0]?.outcome.status).toBe('succeeded');
    }
    // A different call, whose page also changes every time, gets no restart: four, then the loop.
    const other = await observeUntilRefused(h, runId, true, { n: 2 }, 34);
    expect(other).toMatchObject({ observed: 4, refused: 'tool.loop_detected' });
  });

  it('a call without a key keeps counting across steps', async () => {
    const h = await harness({ tools: [tool({ name: 'demo.page' })] });
    const { runId } = await h.open();
    expect(await observeUntilRefused(h, runId, true)).toMatchObject({ observed: 4, refused: 'tool.loop_detected' });
  });
});

describe.each(drivers())('a session pinning web.fetch on %s', (driver) => {
  const harness = useHarness(driver);

  it('pins web.fetch, runs it through submitStep, and a changing page restarts its count while the same page trips', async () => {
    const egress = new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true });
    const h = await harness({ tools: [createWebFetchTool({ egress })] });
    let version = 0;
    const changing = pages.route(`/changing-${driver}`, (request, response) => {
      version += 1;
      html(`<title>Counter</title><p>visit ${version}</p>`)(request, response);
    });
    const steady = pages.route(`/steady-${driver}`, html('<title>Steady</title><p>the same</p>'));

    const session = await h.runtime.openSession(
      h.tenantId,
      h.principal,
      { agentId: 'agent' },
      { flags: {}, targetKinds: ['in_process', 'web_provider'] },
    );
    expect(session.toolNames).toContain('web.fetch');
    const run = await h.runtime.createRun(h.tenantId, session.id, { deadlineAt: new Date(h.clock.now().getTime() + 3_600_000) });
    const fetchStep = (step: number, url: string) =>
      h.runtime.submitStep(h.step(run.id, step, [callOf(`w${step}`, 'web.fetch', { url }, ['user'])]));

    const first = await fetchStep(1, changing);
    expect(first.items[0]?.outcome).toMatchObject({ status: 'succeeded', action: 'web.fetch' });
    // The result is external: enveloped as EXTERNAL_UNTRUSTED, and the key is never shown.
    expect(JSON.stringify(first.items[0])).toContain('visit 1');
    expect(JSON.stringify(first.items[0])).not.toMatch(/evidence/);
    // Six more reads of a page that changes each time: no loop.
    for (let step = 2; step <= 7; step++) expect((await fetchStep(step, changing)).items[0]?.outcome.status).toBe('succeeded');
    // The same page four times, then the fifth identical call is a loop.
    for (let step = 8; step <= 11; step++) expect((await fetchStep(step, steady)).items[0]?.outcome.status).toBe('succeeded');
    const fifth = await fetchStep(12, steady);
    expect(fifth.items[0]?.outcome.reason_code).toBe('tool.loop_detected');
    expect(version).toBe(7);
  });

  it('does not offer web.fetch to a session whose environment has no web_provider target', async () => {
    const h = await harness({ tools: [createWebFetchTool({ egress: new DefaultEgressPolicy() })] });
    const session = await h.runtime.openSession(h.tenantId, h.principal, { agentId: 'agent' }, { flags: {}, targetKinds: ['in_process'] });
    expect(session.toolNames).not.toContain('web.fetch');
  });
});
