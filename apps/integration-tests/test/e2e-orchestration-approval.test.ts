import { VeetbotClient } from '@veetbot/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScene, until, type E2eScene } from '../src/e2e-processes';

/*
 * § Approvals inside a script over the real paths (docs/adr/0039): the api and a worker process
 * on PostgreSQL, a 1-second approval hold. The program's call waits past the hold, the step
 * answers `suspended` (kind approval, ref the approval's id), and POST /v1/approvals/{id}/approve
 * — the route every approval uses — re-queues the step; the worker re-runs the program, the
 * earlier call deduplicates, and the approved line is sent once.
 */
let scene: E2eScene;

beforeAll(async () => {
  scene = await startScene({ workers: 1, workerEnv: { VEETBOT_APPROVAL_HOLD_SECONDS: '1' } });
}, 120_000);

afterAll(async () => {
  await scene?.close();
});

describe('an orchestration waiting past its approval hold, approved through the api', () => {
  it('suspends, is resumed by the approval route, and the program finishes with its effects once', async () => {
    const client = new VeetbotClient({ baseUrl: scene.baseUrl, apiKey: scene.demoKey });
    const session = await client.openSession({
      agent_id: 'orchestration-approval',
      enabled_tools: ['sandbox.run_orchestration', 'workspace.write_text', 'demo.external_write'],
    });
    expect(session.tools.map((t) => t.name)).toContain('sandbox.run_orchestration');
    const run = await client.createRun({ session_id: session.id, deadline_seconds: 3_600 });
    const source = [
      "import { tools } from '/opt/veetbot/veetbot-tools.mjs';",
      "const wrote = await tools.call('workspace.write_text', { path: 'plan.md', text: 'plan' });",
      "const sent = await tools.call('demo.external_write', { line: 'e2e-approved-line' });",
      "console.log('wrote', wrote.outcome.status, 'sent', sent.outcome.status);",
    ].join('\n');
    const step = {
      step_number: 1,
      calls: [
        {
          call_id: 'orchestrate',
          tool_name: 'sandbox.run_orchestration',
          arguments: { language: 'javascript', source },
          context_trust: ['user' as const],
        },
      ],
      wait_seconds: 20,
    };
    const suspended = await client.submitStepAndWait(run.id, step, { timeoutMs: 60_000 });
    expect(suspended).toMatchObject({ status: 'suspended', items: [], run_status: 'running' });
    const pending = await client.listApprovals();
    expect(pending.approvals).toHaveLength(1);
    const approvalId = pending.approvals[0]!.id;
    expect(pending.approvals[0]).toMatchObject({
      tool_name: 'demo.external_write',
      step_number: 1,
      call_id: expect.stringMatching(/^bridge:/),
    });
    expect(suspended.suspended).toEqual([{ call_id: 'orchestrate', invocation_id: expect.any(String), kind: 'approval', ref: approvalId }]);
    expect(await scene.outboxLines()).toEqual([]);

    await client.approve(approvalId);
    const completed = await until(
      () => client.getStep(run.id, 1),
      (outcome) => outcome.status === 'completed',
      90_000,
      'the step completed after the approval',
    );
    const text = completed.items[0]?.content.map((p) => (p.type === 'text' ? p.text : '')).join('') ?? '';
    expect(completed.items[0]?.outcome.status).toBe('succeeded');
    expect(text).toContain('wrote succeeded sent succeeded');
    const lines = await scene.outboxLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]?.endsWith('\te2e-approved-line')).toBe(true);
  }, 240_000);
});
