import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { argumentsHash, canonicalJson } from '@veetbot/domain';
import { controlTools } from '@veetbot/runtime';
import { createBuiltinTools } from '@veetbot/tools-builtin';
import { drivers } from '../../src';
import { callOf, tool, useHarness, type Harness } from './fixtures';

/**
 * § Control tools, tool.call: through the runtime on the real store. The call continues as the
 * tool it names — rows, events, approvals and the batch's parallelism carry that tool — and
 * every refusal of the wrapper itself is recorded under tool.call's name.
 */
describe.each(drivers())('tool.call through the runtime on %s', (driver) => {
  const harness = useHarness(driver);
  const folders: string[] = [];
  afterEach(async () => {
    for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
  });

  async function scene(): Promise<{ h: Harness; outbox: string; sessionId: string; runId: string }> {
    const folder = await mkdtemp(path.join(tmpdir(), 'veetbot-tool-call-'));
    folders.push(folder);
    const outbox = path.join(folder, 'outbox.log');
    const h = await harness({
      tools: [
        ...controlTools(),
        ...createBuiltinTools({ outboxPath: outbox }),
        tool({ name: 'demo.read' }),
        tool({ name: 'demo.read_too' }),
        tool({ name: 'demo.write_file', side_effect: 'workspace_write', idempotency: 'idempotent', allow_parallel: false }),
      ],
    });
    const session = await h.runtime.openSession(
      h.tenantId,
      h.principal,
      { agentId: 'agent' },
      { flags: {}, targetKinds: ['in_process'] },
      { deferredTools: ['demo.read', 'demo.read_too', 'demo.write_file', 'demo.external_write'] },
    );
    const run = await h.runtime.createRun(h.tenantId, session.id, { deadlineAt: new Date(h.clock.now().getTime() + 3_600_000) });
    return { h, outbox, sessionId: session.id, runId: run.id };
  }

  const wrap = (callId: string, name: string, args: unknown, contextTrust: 'user' | 'external_untrusted' = 'user') =>
    callOf(callId, 'tool.call', { name, arguments: args }, [contextTrust]);

  async function rowOf(h: Harness, runId: string, callId: string) {
    const row = (await h.stores.invocations.listForRun(h.tenantId, runId)).find((r) => r.callId === callId);
    if (row === undefined) throw new Error(`no row for ${callId}`);
    return row;
  }

  it('runs the named tool under its own name, with the model call id: row, events, item', async () => {
    const { h, runId } = await scene();
    const outcome = await h.runtime.submitStep(h.step(runId, 1, [wrap('call_1', 'demo.read', { n: 7 })]));
    expect(outcome.items).toHaveLength(1);
    const item = outcome.items[0]!;
    expect(item.call_id).toBe('call_1');
    expect(item.tool_name).toBe('demo.read');
    expect(item.outcome).toMatchObject({ status: 'succeeded', action: 'demo.read' });
    expect(item.content[0]?.type === 'text' && item.content[0].text).toContain('ran {"n":7}');

    const row = await rowOf(h, runId, 'call_1');
    expect(row).toMatchObject({ toolName: 'demo.read', status: 'succeeded', arguments: { n: 7 } });
    expect(row.argumentsHash).toBe(argumentsHash({ n: 7 }));
    const events = await h.stores.events.listAfter(h.tenantId, runId, 0, 1000);
    expect(events.length).toBeGreaterThan(0);
    expect(new Set(events.map((e) => e.payload.tool_name))).toEqual(new Set(['demo.read']));
    expect(new Set(events.map((e) => e.payload.call_id))).toEqual(new Set(['call_1']));
  });

  it('records a malformed wrapper as tool.arguments_invalid under tool.call, counted by the breaker', async () => {
    const { h, runId } = await scene();
    const outcome = await h.runtime.submitStep(h.step(runId, 1, [callOf('bad', 'tool.call', { name: 'demo.read' })]));
    expect(outcome.items[0]).toMatchObject({
      call_id: 'bad',
      tool_name: 'tool.call',
      outcome: { status: 'failed', reason_code: 'tool.arguments_invalid', action: 'tool.call' },
    });
    const row = await rowOf(h, runId, 'bad');
    expect(row).toMatchObject({ toolName: 'tool.call', status: 'failed', reasonCode: 'tool.arguments_invalid' });
    const tally = await h.stores.invocations.breakerTally(h.tenantId, runId);
    expect(tally.groups.map((g) => g.toolName)).toEqual(['tool.call']);
  });

  it('denies a name the run does not offer, and a control tool, with tool.not_found.not_offered under tool.call', async () => {
    const { h, runId } = await scene();
    const outcome = await h.runtime.submitStep(
      h.step(runId, 1, [
        wrap('unknown', 'demo.nothing', {}),
        wrap('control', 'conversation.ask_user', { question: 'Shall I?' }),
        wrap('itself', 'tool.call', { name: 'demo.read', arguments: {} }),
      ]),
    );
    expect(outcome.items.map((i) => [i.call_id, i.tool_name, i.outcome.status, i.outcome.reason_code])).toEqual([
      ['unknown', 'tool.call', 'denied', 'tool.not_found.not_offered'],
      ['control', 'tool.call', 'denied', 'tool.not_found.not_offered'],
      ['itself', 'tool.call', 'denied', 'tool.not_found.not_offered'],
    ]);
    const rows = await h.stores.invocations.listForRun(h.tenantId, runId);
    expect(rows.map((r) => [r.toolName, r.status])).toEqual([
      ['tool.call', 'denied'],
      ['tool.call', 'denied'],
      ['tool.call', 'denied'],
    ]);
    // No question was asked: the run did not move to waiting_for_user.
    expect(outcome.suspended).toEqual([]);
    expect((await h.stores.runs.get(h.tenantId, runId))?.status).toBe('running');
  });

  it('fails invalid arguments for the named tool under its name, returning its input schema — also when replayed', async () => {
    const { h, runId } = await scene();
    const submission = h.step(runId, 1, [wrap('x', 'demo.external_write', { text: 'no line' })]);
    const outcome = await h.runtime.submitStep(submission);
    const item = outcome.items[0]!;
    expect(item).toMatchObject({
      call_id: 'x',
      tool_name: 'demo.external_write',
      outcome: { status: 'failed', reason_code: 'tool.arguments_invalid', action: 'demo.external_write' },
    });
    const schema = canonicalJson(h.registry.get('demo.external_write').spec.input_schema);
    expect(item.content).toContainEqual({ type: 'text', text: schema, trust: 'platform' });
    const row = await rowOf(h, runId, 'x');
    expect(row).toMatchObject({ toolName: 'demo.external_write', status: 'failed' });
    // The row holds what the item shows: a resubmission renders the same item from it.
    const again = await h.runtime.submitStep(submission);
    expect(again.items).toEqual(outcome.items);
  });

  it('decides a batch’s parallelism by the tools it runs: two wrapped reads run parallel, a wrapped write sequential', async () => {
    const { h, runId } = await scene();
    const reads = await h.runtime.submitStep(h.step(runId, 1, [wrap('a', 'demo.read', { n: 1 }), wrap('b', 'demo.read_too', { n: 2 })]));
    expect(reads.mode).toBe('parallel');
    expect(reads.items.map((i) => [i.call_id, i.tool_name, i.outcome.status])).toEqual([
      ['a', 'demo.read', 'succeeded'],
      ['b', 'demo.read_too', 'succeeded'],
    ]);
    const readRows = (await h.stores.invocations.listForRun(h.tenantId, runId)).filter((r) => r.stepNumber === 1);
    expect(new Set(readRows.map((r) => r.parallelGroup)).size).toBe(1);
    expect(readRows[0]?.parallelGroup).not.toBeNull();

    const mixed = await h.runtime.submitStep(
      h.step(runId, 2, [wrap('c', 'demo.read', { n: 3 }), wrap('d', 'demo.write_file', { path: 'a.txt' })]),
    );
    expect(mixed.mode).toBe('sequential');
    expect(mixed.items.map((i) => [i.call_id, i.tool_name, i.outcome.status])).toEqual([
      ['c', 'demo.read', 'succeeded'],
      ['d', 'demo.write_file', 'succeeded'],
    ]);
    // A wrapper that cannot be unwrapped has an unknown effect: sequential.
    const unresolved = await h.runtime.submitStep(h.step(runId, 3, [wrap('e', 'demo.read', { n: 4 }), wrap('f', 'demo.nothing', {})]));
    expect(unresolved.mode).toBe('sequential');
  });

  it('holds a wrapped write for approval under the deferred tool’s own name; approved, the resubmission runs it once', async () => {
    const { h, runId, outbox } = await scene();
    // The turn saw untrusted content: the default profile asks a human before an external write.
    const submission = h.step(runId, 1, [wrap('w', 'demo.external_write', { line: 'approved line' }, 'external_untrusted')]);
    const first = await h.runtime.submitStep(submission);
    expect(first.items).toEqual([]);
    expect(first.pendingApprovals.map((p) => p.callId)).toEqual(['w']);
    const row = await h.stores.invocations.getById(h.tenantId, first.pendingApprovals[0]!.invocationId);
    expect(row).toMatchObject({ toolName: 'demo.external_write', status: 'waiting_for_approval', callId: 'w' });
    expect(row?.argumentsHash).toBe(argumentsHash({ line: 'approved line' }));
    const approval = await h.stores.approvals.getByInvocation(h.tenantId, row!.id);
    expect(approval).toMatchObject({ status: 'pending', invocationId: row!.id, runId });
    const events = await h.stores.events.listAfter(h.tenantId, runId, 0, 1000);
    expect(new Set(events.map((e) => e.payload.tool_name))).toEqual(new Set(['demo.external_write']));

    await h.stores.approvals.decide(
      h.tenantId,
      approval!.id,
      { decision: 'approved', decidedBy: 'approver-1', decidedAt: h.clock.now() },
      [],
    );
    const second = await h.runtime.submitStep(submission);
    expect(second.pendingApprovals).toEqual([]);
    expect(second.items.map((i) => [i.call_id, i.tool_name, i.outcome.status])).toEqual([['w', 'demo.external_write', 'succeeded']]);
    expect(await h.stores.invocations.getById(h.tenantId, row!.id)).toMatchObject({ status: 'succeeded', toolName: 'demo.external_write' });
    const third = await h.runtime.submitStep(submission);
    expect(third.items).toEqual(second.items);
    const lines = (await readFile(outbox, 'utf8')).split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('approved line');
  });

  describe('openSession with deferred tools', () => {
    it('stores the deferred names on the session row', async () => {
      const { h, sessionId } = await scene();
      const stored = await h.stores.sessions.get(h.tenantId, sessionId);
      expect(stored?.deferredToolNames).toEqual(['demo.read', 'demo.read_too', 'demo.write_file', 'demo.external_write']);
      expect(stored?.toolNames).toEqual(expect.arrayContaining(['tool.call', 'demo.read', 'demo.external_write']));
    });

    it('refuses a name outside the pin, a control tool, and deferred tools without tool.call, with runtime.session_invalid', async () => {
      const { h } = await scene();
      const open = (deferredTools: string[], enabledTools?: string[]) =>
        h.runtime.openSession(
          h.tenantId,
          h.principal,
          { agentId: 'agent', ...(enabledTools === undefined ? {} : { enabledTools }) },
          { flags: {}, targetKinds: ['in_process'] },
          { deferredTools },
        );
      await expect(open(['demo.read', 'demo.nothing'])).rejects.toMatchObject({
        code: 'runtime.session_invalid',
        message: expect.stringContaining('deferred_tools.1'),
      });
      await expect(open(['skill.load'])).rejects.toMatchObject({ code: 'runtime.session_invalid' });
      await expect(open(['demo.read'], ['demo.read'])).rejects.toMatchObject({
        code: 'runtime.session_invalid',
        message: expect.stringContaining('tool.call'),
      });
      // Outside the agent's enabled tools is outside the pin.
      await expect(open(['demo.read_too'], ['demo.read', 'tool.call'])).rejects.toMatchObject({ code: 'runtime.session_invalid' });
      const ok = await open(['demo.read'], ['demo.read', 'tool.call']);
      expect(ok.deferredToolNames).toEqual(['demo.read']);
    });
  });
});
