import { describe, expect, it } from 'vitest';
import { drivers } from '../../src';
import type { DynamicTool, McpClientPort, McpSessionRequest, RegistrationReport } from '@veetbot/ports';
import { callOf, gate, tool, useHarness } from './fixtures';

/** An McpClientPort that discovers nothing and records which sessions' transports were released. */
class ReleaseRecorder implements McpClientPort {
  readonly released: string[] = [];
  async prepareSession(_request: McpSessionRequest, register: (tools: readonly DynamicTool[]) => Promise<RegistrationReport>) {
    return { servers: [], registration: await register([]) };
  }
  async releaseSession(sessionId: string): Promise<void> {
    this.released.push(sessionId);
  }
  async shutdown(): Promise<void> {}
}

const write = tool({
  name: 'demo.send',
  side_effect: 'external_write',
  idempotency: 'non_idempotent',
  allow_parallel: false,
  risk: 'medium',
});

/** Issue 16 item 2, § MCP: "Run teardown releases its session's transports promptly, including suspension." */
describe.each(drivers())('runtime run teardown on %s', (driver) => {
  const harness = useHarness(driver);

  describe("run teardown releases the session's MCP transports (docs/adr/0024)", () => {
    it('an ordinary step keeps them; a step that ends the run (deadline) releases them', async () => {
      const mcp = new ReleaseRecorder();
      const h = await harness({ tools: [tool({ name: 'demo.read' })], mcp });
      const { sessionId, runId } = await h.open({ deadlineInMs: 1000 });
      await h.runtime.submitStep(h.step(runId, 1, [callOf('a', 'demo.read', { n: 1 })]));
      expect(mcp.released).toEqual([]);
      h.clock.advance(1000);
      const late = await h.runtime.submitStep(h.step(runId, 2, [callOf('b', 'demo.read', { n: 2 })]));
      expect(late.runFailed).toBe('deadline_exceeded');
      expect(mcp.released).toEqual([sessionId]);
    });

    it('suspension: a step that leaves a call waiting for an approval releases them', async () => {
      const mcp = new ReleaseRecorder();
      const h = await harness({ tools: [write, tool({ name: 'demo.read' })], mcp });
      const { sessionId, runId } = await h.open();
      const outcome = await h.runtime.submitStep(
        h.step(runId, 1, [callOf('r', 'demo.read', { n: 1 }), callOf('w', 'demo.send', { n: 1 }, ['external_untrusted'])]),
      );
      expect(outcome.pendingApprovals).toHaveLength(1);
      expect(mcp.released).toEqual([sessionId]);
    });

    it('cancelling an idle run releases them at once; a step refused because its run ended releases them too', async () => {
      const mcp = new ReleaseRecorder();
      const h = await harness({ tools: [tool({ name: 'demo.read' })], mcp });
      const { sessionId, runId } = await h.open();
      await h.runtime.cancelRun(h.tenantId, runId);
      expect(mcp.released).toEqual([sessionId]);
      await expect(h.runtime.submitStep(h.step(runId, 1, [callOf('a', 'demo.read', { n: 1 })]))).rejects.toMatchObject({
        code: 'runtime.run_not_active',
      });
      expect(mcp.released).toEqual([sessionId, sessionId]);
    });

    it('cancelling a run whose step is in flight here releases them when the step stops, not under its call', async () => {
      const mcp = new ReleaseRecorder();
      const held = gate();
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const h = await harness({
        tools: [
          tool({ name: 'demo.hold' }, async () => {
            entered();
            await held.wait;
            return { ok: true, content: [] };
          }),
        ],
        mcp,
      });
      const { sessionId, runId } = await h.open();
      const step = h.runtime.submitStep(h.step(runId, 1, [callOf('a', 'demo.hold', { n: 1 })]));
      await inside;
      await h.runtime.cancelRun(h.tenantId, runId);
      // The call is in flight in this process: its transport is not pulled from under it.
      expect(mcp.released).toEqual([]);
      held.release();
      await step;
      expect(mcp.released).toEqual([sessionId]);
    });

    it("several runs of one session: one run's teardown waits while another run of the session is at work here", async () => {
      const mcp = new ReleaseRecorder();
      const held = gate();
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const h = await harness({
        tools: [
          tool({ name: 'demo.hold' }, async () => {
            entered();
            await held.wait;
            return { ok: true, content: [] };
          }),
          tool({ name: 'demo.read' }),
        ],
        mcp,
      });
      const session = await h.runtime.openSession(
        h.tenantId,
        h.principal,
        { agentId: 'agent' },
        { flags: {}, targetKinds: ['in_process'] },
      );
      const deadlineAt = new Date(h.clock.now().getTime() + 3_600_000);
      const busy = await h.runtime.createRun(h.tenantId, session.id, { deadlineAt });
      const other = await h.runtime.createRun(h.tenantId, session.id, { deadlineAt });
      const step = h.runtime.submitStep(h.step(busy.id, 1, [callOf('a', 'demo.hold', { n: 1 })]));
      await inside;
      await h.runtime.cancelRun(h.tenantId, other.id);
      expect(mcp.released).toEqual([]);
      held.release();
      const outcome = await step;
      // The busy run's step ended normally: that run still works, its transports stay.
      expect(outcome.runFailed).toBeNull();
      expect(mcp.released).toEqual([]);
    });
  });
});
