import { describe, expect, it } from 'vitest';
import { mcpToolName } from '@veetbot/domain';
import type { Tool, ToolExecutionContext } from '@veetbot/ports';
import { drivers } from '../src/test-database';
import { httpServer, type McpScene } from '../src/mcp-harness';
import { ScriptableHttpServer } from '../src/mcp-servers';
import { expectOutcome, useMcpSuite } from './mcp-suite';
import { useRuntimeScene, userCall } from './runtime-harness';

/**
 * Issue 16 item 6 (docs/adr/0025): the effective timeout is one number. § MCP: "The per-call
 * timeout is min(request_timeout, spec.timeout_seconds, remaining run budget), and it is the
 * effective value that lands in ToolExecutionContext.timeout_seconds"; § ToolExecutionContext:
 * the executor computes it "once, in one place, where it can also refuse to start a call that
 * cannot finish". A real scripted MCP server (a child process) and the real adapter, through
 * the one pipeline on a real database.
 */
describe.each(drivers())('the effective timeout is one number (%s)', (driver) => {
  const suite = useMcpSuite(driver);
  const slow = mcpToolName('scripted', 'slow');

  /** Records the context the executor hands the (real) MCP tool; the tool itself runs unchanged. */
  function observeContexts(scene: McpScene): ToolExecutionContext[] {
    const seen: ToolExecutionContext[] = [];
    const get = scene.registry.get.bind(scene.registry);
    scene.registry.get = (name: string, version?: string): Tool => {
      const tool = get(name, version);
      return {
        ...tool,
        execute: (args, ctx) => {
          seen.push(ctx);
          return tool.execute(args, ctx);
        },
      };
    };
    return seen;
  }

  /** A slow call cut at `expected` seconds: tool.timeout, the context says so, the server was told to stop. */
  async function expectCutAt(
    server: ScriptableHttpServer,
    scene: McpScene,
    expected: number,
    adjust: Parameters<McpScene['run']>[3] = {},
  ): Promise<void> {
    const seen = observeContexts(scene);
    const { item, row } = await scene.run(slow, { ms: 120_000 }, {}, adjust);
    expectOutcome(item, 'failed', 'tool.timeout');
    expect(row.status).toBe('failed');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.timeoutSeconds).toBeCloseTo(expected, 6);
    // deadline_at is the same number, on the executor's clock.
    expect(seen[0]!.deadlineAt.getTime() - scene.clock.now().getTime()).toBeCloseTo(expected * 1000, 0);
    // The call reached the server and was cancelled there (notifications/cancelled), never answered.
    const journal = await server.journal();
    expect(journal.filter((e) => e.tool === 'slow')).toHaveLength(1);
    await expect.poll(async () => (await server.journal()).some((e) => e.rpcMethod === 'notifications/cancelled')).toBe(true);
  }

  it("the server's request timeout is the smallest: it lands in the context, and the call is cut there", async () => {
    const server = await ScriptableHttpServer.start();
    const scene = await suite.open({ servers: [httpServer('scripted', server.url, { timeoutSeconds: 30, requestTimeoutSeconds: 1.5 })] });
    await expectCutAt(server, scene, 1.5);
  });

  it("the tool's declared timeout is the smallest", async () => {
    const server = await ScriptableHttpServer.start();
    const scene = await suite.open({ servers: [httpServer('scripted', server.url, { timeoutSeconds: 2, requestTimeoutSeconds: 20 })] });
    await expectCutAt(server, scene, 2);
  });

  it('what is left of the run is the smallest', async () => {
    const server = await ScriptableHttpServer.start();
    const scene = await suite.open({ servers: [httpServer('scripted', server.url, { timeoutSeconds: 30, requestTimeoutSeconds: 20 })] });
    await expectCutAt(server, scene, 1.25, { deadlineAt: new Date(scene.clock.now().getTime() + 1_250) });
  });

  it('a call the run leaves too little time is refused before it starts: run.deadline_exceeded, nothing reaches the server', async () => {
    const server = await ScriptableHttpServer.start();
    const scene = await suite.open({ servers: [httpServer('scripted', server.url, { timeoutSeconds: 30, requestTimeoutSeconds: 20 })] });
    const seen = observeContexts(scene);
    const { item, row } = await scene.run(slow, { ms: 10 }, {}, { deadlineAt: new Date(scene.clock.now().getTime() + 400) });
    expectOutcome(item, 'failed', 'run.deadline_exceeded');
    expect(row.status).toBe('failed');
    expect(row.effectSentAt).toBeNull();
    expect(seen).toHaveLength(0);
    expect((await server.journal()).filter((e) => e.tool === 'slow')).toHaveLength(0);
    // A run that still leaves the minimum runs the call.
    const { item: later } = await scene.run(slow, { ms: 10 }, {}, { deadlineAt: new Date(scene.clock.now().getTime() + 5_000) });
    expectOutcome(later, 'succeeded', 'tool.ok');
  });
});

describe.each(drivers())('the runtime refuses a call the run leaves too little time (%s)', (driver) => {
  const scene = useRuntimeScene(driver);

  it('dispatched under a second before the deadline: refused run.deadline_exceeded before dispatch, the tool never runs, the run fails', async () => {
    const s = scene();
    const session = await s.runtime.openSession(
      s.tenantId,
      s.principal,
      { agentId: 'agent-1' },
      { flags: {}, targetKinds: ['in_process'] },
    );
    const run = await s.runtime.createRun(s.tenantId, session.id, { deadlineAt: new Date(s.clock.now().getTime() + 60_000) });
    expect((await s.runtime.submitStep(s.step(run.id, 1, [userCall('a', 'demo.rt_read', { n: 1 })]))).items[0]?.outcome.status).toBe(
      'succeeded',
    );
    s.clock.advance(59_500);
    const late = await s.runtime.submitStep(s.step(run.id, 2, [userCall('b', 'demo.rt_read', { n: 2 })]));
    expect(late.items.map((i) => i.outcome.reason_code)).toEqual(['run.deadline_exceeded']);
    expect(late.runFailed).toBe('deadline_exceeded');
    expect(s.probes['demo.rt_read'].executions).toBe(1);
    const rows = await s.stores.invocations.listForRun(s.tenantId, run.id, { from: 2, to: 2 });
    expect(rows.map((r) => [r.status, r.reasonCode, r.startedAt])).toEqual([['failed', 'run.deadline_exceeded', null]]);
    expect(await s.stores.runs.get(s.tenantId, run.id)).toMatchObject({ status: 'failed', failureReason: 'run.deadline_exceeded' });
  });
});
