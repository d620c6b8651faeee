import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StepOutcome, Approval, Invocation, InvocationList, Session } from '@veetbot/client';
import { errorOf, openApiHarness, sessionAndRun, type ApiHarness } from './harness';

let h: ApiHarness;
beforeAll(async () => {
  h = await openApiHarness();
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const submit = (runId: string, body: unknown, key?: string) =>
  h.call('POST', `/v1/runs/${runId}/steps`, { body, ...(key === undefined ? {} : { key }) });

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('sessions', () => {
  it('opens a session with the pinned, model-visible definitions and tool_schema_sha256; get and close', async () => {
    const opened = await h.call('POST', '/v1/sessions', {
      body: { agent_id: 'agent-1', enabled_tools: ['math.*', 'demo.external_write'] },
    });
    expect(opened.status).toBe(201);
    const session = (await opened.json()) as Session;
    expect(session.tools.map((t) => t.name).sort()).toEqual(['demo.external_write', 'math.evaluate']);
    expect(Object.keys(session.tools[0]!).sort()).toEqual(['description', 'input_schema', 'name']);
    expect(session.tool_schema_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(session.mcp_servers).toEqual([]);

    const fetched = (await (await h.call('GET', `/v1/sessions/${session.id}`)).json()) as Session;
    expect(fetched).toMatchObject({ id: session.id, status: 'open', tool_schema_sha256: session.tool_schema_sha256, tools: session.tools });
    const closed = (await (await h.call('POST', `/v1/sessions/${session.id}/close`)).json()) as Session;
    expect(closed.status).toBe('closed');
    expect(closed.closed_at).not.toBeNull();
    // Closing is idempotent.
    expect((await h.call('POST', `/v1/sessions/${session.id}/close`)).status).toBe(200);
  });

  it("filters the pin by the principal's scopes: a key without demo.write never sees demo.external_write", async () => {
    const { keyId: _unused, key } = await import('@veetbot/composition').then((m) =>
      m.provisionTenantKey(h.system.stores, {
        tenantId: 'tenant-a',
        tenantName: 'tenant-a',
        principalId: 'reader',
        scopes: ['workspace.read'],
        now: new Date(),
      }),
    );
    const session = (await (await h.call('POST', '/v1/sessions', { key, body: { agent_id: 'a' } })).json()) as Session;
    const names = session.tools.map((t) => t.name);
    expect(names).toContain('workspace.read_text');
    expect(names).not.toContain('demo.external_write');
    expect(names).not.toContain('workspace.write_text');
  });

  it('refuses an MCP server nobody configured', async () => {
    const error = await errorOf(await h.call('POST', '/v1/sessions', { body: { agent_id: 'a', mcp_servers: ['nowhere'] } }));
    expect(error).toMatchObject({ status: 400, code: 'mcp.server_unknown' });
  });
});

describe('steps', () => {
  it('runs a batch through the worker and answers 200 with one ToolResultItem per call, in call order', async () => {
    const { runId } = await sessionAndRun(h);
    const response = await submit(runId, {
      step_number: 1,
      calls: [
        { call_id: 'c1', tool_name: 'math.evaluate', arguments: { expression: '2*(3+4)' }, context_trust: ['user'] },
        { call_id: 'c2', tool_name: 'nope.nothing', arguments: {}, context_trust: ['user'] },
      ],
      wait_seconds: 20,
    });
    expect(response.status).toBe(200);
    const outcome = (await response.json()) as StepOutcome;
    expect(outcome).toMatchObject({
      step_number: 1,
      status: 'completed',
      pending_approvals: [],
      synthesis_only: false,
      run_status: 'running',
    });
    expect(outcome.items.map((i) => [i.call_id, i.outcome.status])).toEqual([
      ['c1', 'succeeded'],
      ['c2', 'denied'],
    ]);
    expect(JSON.stringify(outcome.items[0]!.content)).toContain('14');
    expect(outcome.items[1]!.outcome.reason_code).toBe('policy.matrix.unknown_tool');

    // GET answers the same outcome from the rows.
    const again = (await (await h.call('GET', `/v1/runs/${runId}/steps/1`)).json()) as StepOutcome;
    expect(again).toEqual(outcome);
  });

  it('resubmitting the same batch returns the recorded outcomes and never executes twice', async () => {
    const { runId } = await sessionAndRun(h);
    const before = (await h.outboxLines()).length;
    const body = {
      step_number: 1,
      calls: [{ call_id: 'w1', tool_name: 'demo.external_write', arguments: { line: 'exactly once' }, context_trust: ['user'] }],
      wait_seconds: 20,
    };
    const first = (await (await submit(runId, body)).json()) as StepOutcome;
    expect(first.status).toBe('completed');
    expect(first.items[0]!.outcome.status).toBe('succeeded');
    const second = await submit(runId, body);
    expect(second.status).toBe(200);
    expect((await second.json()) as StepOutcome).toEqual(first);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const lines = (await h.outboxLines()).slice(before);
    expect(lines.filter((l) => l.includes('exactly once'))).toHaveLength(1);
    const rows = (await (await h.call('GET', `/v1/invocations?run_id=${runId}`)).json()) as InvocationList;
    expect(rows.invocations).toHaveLength(1);
  });

  it('answers 202 with Location when the bound passes first, and the step is readable there', async () => {
    const { runId } = await sessionAndRun(h);
    // Stop nothing: a zero wait answers before any worker could have run the batch.
    const response = await submit(runId, {
      step_number: 7,
      calls: [{ call_id: 'c1', tool_name: 'math.evaluate', arguments: { expression: '1+2' }, context_trust: ['user'] }],
      wait_seconds: 0,
    });
    expect(response.status).toBe(202);
    expect(response.headers.get('location')).toBe(`/v1/runs/${runId}/steps/7`);
    expect(((await response.json()) as StepOutcome).status).toBe('running');
    const settled = await until(
      async () => (await (await h.call('GET', `/v1/runs/${runId}/steps/7`)).json()) as StepOutcome,
      (o) => o.status === 'completed',
    );
    expect(settled.items[0]!.outcome.status).toBe('succeeded');
  });
});

describe('approvals', () => {
  const risky = (callId: string, line: string) => ({
    call_id: callId,
    tool_name: 'demo.external_write',
    arguments: { line },
    context_trust: ['user', 'external_untrusted'],
  });

  it('a call needing approval is pending; approve records who and when and re-queues the step so the call runs', async () => {
    const { runId } = await sessionAndRun(h);
    const response = await submit(runId, {
      step_number: 1,
      calls: [
        risky('r1', 'approved line'),
        { call_id: 'm1', tool_name: 'math.evaluate', arguments: { expression: '6*7' }, context_trust: ['user'] },
      ],
      wait_seconds: 20,
    });
    expect(response.status).toBe(200);
    const outcome = (await response.json()) as StepOutcome;
    expect(outcome.status).toBe('waiting_for_approval');
    expect(outcome.items.map((i) => i.call_id)).toEqual(['m1']);
    expect(outcome.pending_approvals).toHaveLength(1);
    const pending = outcome.pending_approvals[0]!;
    expect(pending.call_id).toBe('r1');

    const list = (await (await h.call('GET', '/v1/approvals?status=pending')).json()) as { approvals: Approval[] };
    const approval = list.approvals.find((a) => a.id === pending.approval_id);
    expect(approval).toMatchObject({
      status: 'pending',
      tool_name: 'demo.external_write',
      call_id: 'r1',
      arguments: { line: 'approved line' },
      decided_by: null,
    });
    expect((await h.outboxLines()).filter((l) => l.includes('approved line'))).toHaveLength(0);

    const decided = await h.call('POST', `/v1/approvals/${pending.approval_id}/approve`);
    expect(decided.status).toBe(200);
    const body = (await decided.json()) as Approval;
    expect(body).toMatchObject({ status: 'approved', decided_by: 'tenant-a-admin' });
    expect(Date.parse(body.decided_at!)).toBeGreaterThan(Date.now() - 60_000);
    expect(await errorOf(await h.call('POST', `/v1/approvals/${pending.approval_id}/deny`))).toMatchObject({
      status: 409,
      code: 'approval.already_decided',
    });

    const settled = await until(
      async () => (await (await h.call('GET', `/v1/runs/${runId}/steps/1`)).json()) as StepOutcome,
      (o) => o.status === 'completed',
    );
    expect(settled.items.map((i) => [i.call_id, i.outcome.status])).toEqual([
      ['r1', 'succeeded'],
      ['m1', 'succeeded'],
    ]);
    expect((await h.outboxLines()).filter((l) => l.includes('approved line'))).toHaveLength(1);
    // The resubmitted step's answer is the same as the GET.
    expect(
      (await (
        await submit(runId, {
          step_number: 1,
          calls: [
            risky('r1', 'approved line'),
            { call_id: 'm1', tool_name: 'math.evaluate', arguments: { expression: '6*7' }, context_trust: ['user'] },
          ],
        })
      ).json()) as StepOutcome,
    ).toEqual(settled);
  });

  it('deny ends the call DENIED and nothing is sent', async () => {
    const { runId } = await sessionAndRun(h);
    const outcome = (await (
      await submit(runId, { step_number: 1, calls: [risky('r1', 'denied line')], wait_seconds: 20 })
    ).json()) as StepOutcome;
    const approvalId = outcome.pending_approvals[0]!.approval_id!;
    const denied = (await (await h.call('POST', `/v1/approvals/${approvalId}/deny`)).json()) as Approval;
    expect(denied.status).toBe('denied');
    const settled = await until(
      async () => (await (await h.call('GET', `/v1/runs/${runId}/steps/1`)).json()) as StepOutcome,
      (o) => o.status === 'completed',
    );
    expect(settled.items[0]!.outcome.status).toBe('denied');
    expect((await h.outboxLines()).filter((l) => l.includes('denied line'))).toHaveLength(0);
    const row = (await (await h.call('GET', `/v1/invocations?run_id=${runId}`)).json()) as InvocationList;
    expect(row.invocations[0]).toMatchObject({ status: 'denied', call_id: 'r1' });
  });
});

describe('invocations', () => {
  it('lists with filters and cursor pages, and gets one row with its result', async () => {
    const { runId } = await sessionAndRun(h);
    const calls = [1, 2, 3, 4, 5].map((n) => ({
      call_id: `c${n}`,
      tool_name: 'math.evaluate',
      arguments: { expression: `${n}+${n}` },
      context_trust: ['user'],
    }));
    expect((await submit(runId, { step_number: 1, calls, wait_seconds: 20 })).status).toBe(200);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: InvocationList = (await (
        await h.call('GET', `/v1/invocations?run_id=${runId}&limit=2${cursor === null ? '' : `&cursor=${cursor}`}`)
      ).json()) as InvocationList;
      expect(page.invocations.length).toBeLessThanOrEqual(2);
      seen.push(...page.invocations.map((i) => i.call_id));
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(seen.sort()).toEqual(['c1', 'c2', 'c3', 'c4', 'c5']);

    const none = (await (await h.call('GET', `/v1/invocations?run_id=${runId}&status=failed`)).json()) as InvocationList;
    expect(none.invocations).toEqual([]);
    const byTool = (await (
      await h.call('GET', `/v1/invocations?run_id=${runId}&tool_name=math.evaluate&status=succeeded`)
    ).json()) as InvocationList;
    expect(byTool.invocations).toHaveLength(5);

    const one = (await (await h.call('GET', `/v1/invocations/${byTool.invocations[0]!.id}`)).json()) as Invocation;
    expect(one).toMatchObject({
      run_id: runId,
      status: 'succeeded',
      tool_name: 'math.evaluate',
      outcome_status: 'succeeded',
      review: null,
    });
    expect(one.result).not.toBeNull();
    expect(await errorOf(await h.call('GET', '/v1/invocations?cursor=garbage'))).toMatchObject({ status: 400, code: 'request.invalid' });
  });
});
