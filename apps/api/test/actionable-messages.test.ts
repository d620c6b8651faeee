import type { Session, StepOutcome } from '@veetbot/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, openApiHarness, sessionAndRun, type ApiHarness } from './harness';

/**
 * Issue 10 item 9: messages a person (or a model) can act on, through the real API — a path
 * that leaves the workspace says so, an exclusive bound says "greater than", and enabled_tools
 * entries that name nothing are reported at session open. (The start-up messages are proved by
 * running the processes: apps/api/test/process.test.ts, apps/worker/test/worker-process.test.ts.)
 */
let h: ApiHarness;
beforeAll(async () => {
  h = await openApiHarness();
}, 120_000);
afterAll(async () => {
  await h?.close();
});

describe('messages a person can act on', () => {
  it('a workspace path escape is reported as one, not as a remote refusal', async () => {
    const { runId } = await sessionAndRun(h);
    const attempts = ['../../etc/passwd', '/etc/passwd', 'a/../../outside.txt'];
    const response = await h.call('POST', `/v1/runs/${runId}/steps`, {
      body: {
        step_number: 1,
        wait_seconds: 20,
        calls: attempts.map((path, i) => ({
          call_id: `c${i}`,
          tool_name: 'workspace.read_text',
          arguments: { path },
          context_trust: ['user'],
        })),
      },
    });
    expect(response.status).toBe(200);
    const outcome = (await response.json()) as StepOutcome;
    expect(outcome.items).toHaveLength(attempts.length);
    for (const item of outcome.items) {
      expect(item.outcome).toMatchObject({ status: 'failed', reason_code: 'tool.permission.path_escape', remediation: 'modify_arguments' });
      expect(item.outcome.message).toBe('Not performed. The path is outside the workspace; use a relative path inside it.');
      expect(item.outcome.message).not.toMatch(/remote/i);
    }
  });

  it('deadline_seconds: 0 must be greater than 0 (and every exclusive or inclusive bound says which)', async () => {
    const session = (await (await h.call('POST', '/v1/sessions', { body: { agent_id: 'agent-1' } })).json()) as Session;
    const zero = await errorOf(await h.call('POST', '/v1/runs', { body: { session_id: session.id, deadline_seconds: 0 } }));
    expect(zero).toMatchObject({
      status: 400,
      code: 'request.invalid',
      message: 'Invalid request at body.deadline_seconds: must be greater than 0.',
    });
    const huge = await errorOf(await h.call('POST', '/v1/runs', { body: { session_id: session.id, deadline_seconds: 10 ** 9 } }));
    expect(huge.message).toBe(`Invalid request at body.deadline_seconds: must be at most ${7 * 24 * 3600}.`);
    const empty = await errorOf(await h.call('POST', '/v1/sessions', { body: { agent_id: '' } }));
    expect(empty.message).toBe('Invalid request at body.agent_id: must be at least 1 characters.');
  });

  it('unknown names in enabled_tools are reported in the session-open response', async () => {
    const opened = await h.call('POST', '/v1/sessions', {
      body: { agent_id: 'agent-1', enabled_tools: ['math.evaluate', 'math.evalute', 'workspace.*', 'wrkspace.*', 'math.evalute'] },
    });
    expect(opened.status).toBe(201);
    const session = (await opened.json()) as Session;
    expect(session.unknown_tools).toEqual(['math.evalute', 'wrkspace.*']);
    expect(session.tools.map((t) => t.name)).toContain('math.evaluate');
    // Every name known: an empty list; no enabled_tools: no field (every tool was asked for).
    const known = (await (
      await h.call('POST', '/v1/sessions', { body: { agent_id: 'agent-1', enabled_tools: ['math.*'] } })
    ).json()) as Session;
    expect(known.unknown_tools).toEqual([]);
    const all = (await (await h.call('POST', '/v1/sessions', { body: { agent_id: 'agent-1' } })).json()) as Session;
    expect(all).not.toHaveProperty('unknown_tools');
  });
});
