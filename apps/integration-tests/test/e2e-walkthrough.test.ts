import { join } from 'node:path';
import { VeetbotClient, type StepOutcome } from '@veetbot/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, startNode, startScene, type E2eScene } from '../src/e2e-processes';

/**
 * The README's walkthrough, end to end: the real api and worker processes on PostgreSQL, two
 * keys made with `veetbot key create`, and examples/scripted-agent run as a child process
 * against them (VEETBOT_URL, VEETBOT_API_KEY, VEETBOT_APPROVER_KEY). The approver's key also holds
 * skills.write: it writes the operator skill the agent loads.
 * Its printed output must show every stage; the effects are then checked over HTTP and in the
 * demo outbox.
 */
let scene: E2eScene;

beforeAll(async () => {
  scene = await startScene({ workers: 1 });
}, 120_000);

afterAll(async () => {
  await scene?.close();
});

describe('the walkthrough: examples/scripted-agent against the api and worker processes', () => {
  it('opens a session, runs each scripted turn, approves the external write, downloads the truncated read as an artifact, asks its user, delegates, keeps a working state, loads a skill, calls a deferred tool', async () => {
    // The README's two keys, made with the real CLI against the deployment's database: the
    // agent's without approvals.decide, the approver's with it (and skills.write, the operator's).
    const keyFor = async (principal: string, scopes: string): Promise<string> => {
      const cli = startNode(
        [
          '--import',
          'tsx',
          join(REPO, 'apps/cli/src/main.ts'),
          'key',
          'create',
          '--tenant',
          'demo',
          '--principal',
          principal,
          '--scopes',
          scopes,
          '--json',
        ],
        {
          DATABASE_URL: scene.url,
          VEETBOT_DATA_DIR: scene.dataDir,
        },
      );
      expect(await cli.exited, cli.output()).toEqual({ code: 0, signal: null });
      return (JSON.parse(cli.output()) as { key: string }).key;
    };
    const agentKey = await keyFor('agent', 'workspace.read,workspace.write,demo.write,mcp.*');
    const approverKey = await keyFor('approver', 'approvals.decide,review.resolve,questions.answer,skills.write');
    const agent = startNode(['--import', 'tsx', join(REPO, 'examples/scripted-agent/src/main.ts')], {
      VEETBOT_URL: scene.baseUrl,
      VEETBOT_API_KEY: agentKey,
      VEETBOT_APPROVER_KEY: approverKey,
    });
    const exited = await agent.exited;
    const out = agent.output();
    expect(exited, out).toEqual({ code: 0, signal: null });

    // The pin: the builtins the demo key's scopes allow, model-visible names (the advertised
    // definitions and the deferred math.evaluate).
    const pinned = /^pinned tools: (.+)$/m.exec(out)?.[1]?.split(', ') ?? [];
    expect(pinned).toEqual(
      expect.arrayContaining([
        'math.evaluate',
        'workspace.write_text',
        'workspace.read_text',
        'demo.external_write',
        'conversation.ask_user',
        'delegate.run',
        'context.update_working_state',
        'skill.load',
        'tool.call',
      ]),
    );
    // The deferred tool index: math.evaluate by a one-line entry (docs/adr/0035).
    expect(out).toMatch(/^deferred tool index: math\.evaluate — \S.*$/m);
    // The operator skill: created with the approver's key, then advertised by its metadata only.
    expect(out).toMatch(/^skill created: metric-summary v1 \(operator, trust trusted_configuration\)$/m);
    expect(out).toMatch(
      /^skill advertised: metric-summary v1 \(operator\) requires \[math\.evaluate, web\.search\]: How to write a short summary in metric units\.$/m,
    );
    expect(out).not.toMatch(/^skill advertised: .*Convert every quantity/m);
    const runId = /^run ([0-9a-f-]{36})$/m.exec(out)?.[1];
    expect(runId).toBeDefined();

    // Each ToolResultItem is printed; every call succeeded.
    const items = [...out.matchAll(/^ToolResultItem (\S+) (\S+): (\S+)/gm)].map((m) => [m[1], m[2], m[3]]);
    expect(items).toEqual([
      ['call_math', 'math.evaluate', 'succeeded'],
      ['call_write', 'workspace.write_text', 'succeeded'],
      ['call_read', 'workspace.read_text', 'succeeded'],
      ['call_send', 'demo.external_write', 'succeeded'],
      ['call_big_write', 'workspace.write_text', 'succeeded'],
      ['call_big_read', 'workspace.read_text', 'succeeded'],
      ['call_ask', 'conversation.ask_user', 'succeeded'],
      ['child_math', 'math.evaluate', 'succeeded'],
      ['call_delegate', 'delegate.run', 'succeeded'],
      ['call_state', 'context.update_working_state', 'succeeded'],
      ['call_skill', 'skill.load', 'succeeded'],
      ['call_deferred', 'math.evaluate', 'succeeded'],
    ]);
    expect(out).toMatch(/"structured":\{"value":98\}/);
    expect(out).toMatch(/hello from the scripted agent/);

    // The approval: pending, then approved by the demo principal, before the write's item.
    expect(out).toMatch(/^approval pending: call call_send \(approval [0-9a-f-]{36}\)$/m);
    // The agent's own key may not decide; the approver's does.
    expect(out).toMatch(/^agent's own approval refused: 403 auth\.scope_missing$/m);
    expect(out).toMatch(
      /^approver reads: demo\.external_write .* \(arguments [0-9a-f]{64}, policy external-write-needs-approval default@[0-9a-f]{16}\)$/m,
    );
    expect(out).toMatch(/^approval approved: by approver at \d{4}-\d\d-\d\dT/m);
    expect(out.indexOf('approval approved')).toBeLessThan(out.indexOf('ToolResultItem call_send'));
    expect(await scene.outboxLines()).toEqual([expect.stringContaining('summary sent by the scripted agent')]);

    // The truncated read and its artifact, downloaded with the digest checked.
    expect(out).toMatch(/^ToolResultItem call_big_read workspace\.read_text: succeeded \(truncated\)$/m);
    const artifact = /^artifact ([0-9a-f-]{36}): (\d+) bytes, text\/plain[^,]*, trust (\S+), sha256 verified$/m.exec(out);
    expect(artifact, out).not.toBeNull();
    expect(Number(artifact![2])).toBeGreaterThan(4_096);

    // conversation.ask_user: the run waited for its user; the question, answered with the
    // user's key (the approver's), came back with trust `user`, before the call's item.
    const question = /^question ([0-9a-f-]{36}) \(call call_ask\): Which unit system should the summary use\?$/m.exec(out);
    expect(question, out).not.toBeNull();
    expect(out).toMatch(/^run status: waiting_for_user$/m);
    // The agent's own key may not answer (docs/adr/0051): the answer is the user's, with its key.
    expect(out).toMatch(/^agent's own answer refused: 403 auth\.scope_missing$/m);
    expect(out).toMatch(/^answered: metric, please \(item trust user\)$/m);
    expect(out.indexOf('answered: metric')).toBeLessThan(out.indexOf('ToolResultItem call_ask'));
    const asked = printedItem(out, 'call_ask');
    expect(asked).toMatchObject({ tool_name: 'conversation.ask_user', trust: 'user' });
    expect(asked.content).toEqual([{ type: 'text', text: 'metric, please', trust: 'user' }]);

    // delegate.run: the child's brief read from its working state, its own step, its final
    // answer joined into the parent's call as untrusted, enveloped text.
    const child = /^delegated: call call_delegate started child run ([0-9a-f-]{36})$/m.exec(out);
    expect(child, out).not.toBeNull();
    const childId = child![1]!;
    expect(out).toMatch(/^child brief \(working state v1\): Evaluate 12 \* 12 with math\.evaluate and answer with the value\.$/m);
    expect(printedItem(out, 'child_math').structured).toEqual({ value: 144 });
    expect(out).toContain(`child run ${childId} succeeded: 12 * 12 = 144\n`);
    const joined = printedItem(out, 'call_delegate');
    expect(joined).toMatchObject({ tool_name: 'delegate.run', trust: 'external_untrusted' });
    const joinedText = joined.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
    expect(joinedText).toContain('untrusted source="delegate.run"');
    expect(joinedText).toContain('12 * 12 = 144');

    // context.update_working_state, read back.
    const state = /^working state v1: (.+)$/m.exec(out);
    expect(state, out).not.toBeNull();
    expect(JSON.parse(state![1]!)).toEqual({ units: 'metric', child_result: '144', next: 'write the summary' });

    // skill.load: the operator's content, trusted configuration and not enveloped, with the
    // skill.tool.missing note first (web.search is not in this session's pin).
    const loaded = printedItem(out, 'call_skill');
    expect(loaded).toMatchObject({ tool_name: 'skill.load', trust: 'trusted_configuration' });
    expect(loaded.content).toEqual([
      expect.objectContaining({ type: 'text', text: 'skill.tool.missing: this session does not offer web.search.' }),
      expect.objectContaining({
        type: 'text',
        text: 'Convert every quantity to metric units, check arithmetic with math.evaluate, and keep the summary under five lines.',
      }),
    ]);
    expect(JSON.stringify(loaded.content)).not.toContain('untrusted source=');
    expect(loaded.structured).toMatchObject({
      name: 'metric-summary',
      source: 'operator',
      missing_tools: ['web.search'],
      notes: [{ code: 'skill.tool.missing', tools: ['web.search'] }],
    });

    // tool.call: unwrapped into the deferred math.evaluate, which ran under its own name with
    // the model's call id.
    const deferred = printedItem(out, 'call_deferred');
    expect(deferred).toMatchObject({ call_id: 'call_deferred', tool_name: 'math.evaluate', structured: { value: 100 } });
    expect(out).toMatch(/^done: session closed$/m);

    // The same story over HTTP: eleven succeeded rows for the run (tool.call has none of its own:
    // its row is the deferred math.evaluate's), the approval decided, no
    // question left open, one child (succeeded, its one row in its own run), the working state.
    const client = new VeetbotClient({ baseUrl: scene.baseUrl, apiKey: scene.demoKey });
    const rows = await client.listInvocations({ run_id: runId!, limit: 50 });
    expect(rows.invocations.map((r) => r.status).sort()).toEqual(Array(11).fill('succeeded'));
    expect(rows.invocations.filter((r) => r.tool_name === 'math.evaluate')).toHaveLength(2);
    expect(rows.invocations.some((r) => r.tool_name === 'tool.call')).toBe(false);
    expect(rows.invocations.some((r) => r.tool_name === 'skill.load')).toBe(true);
    expect(rows.invocations.find((r) => r.tool_name === 'conversation.ask_user')?.id).toBe(question![1]);
    expect((await client.listQuestions(runId!)).questions).toEqual([]);
    expect((await client.listChildRuns(runId!)).runs).toEqual([
      expect.objectContaining({ id: childId, parent_run_id: runId, status: 'succeeded', result: '12 * 12 = 144' }),
    ]);
    const childRows = await client.listInvocations({ run_id: childId, limit: 50 });
    expect(childRows.invocations.map((r) => [r.tool_name, r.status])).toEqual([['math.evaluate', 'succeeded']]);
    expect((await client.getWorkingState(runId!)).version).toBe(1);
    expect((await client.listApprovals({ status: 'pending' })).approvals).toEqual([]);
    const bytes = (await client.getArtifact(artifact![1]!)).bytes;
    expect(bytes.byteLength).toBe(Number(artifact![2]));

    // Run again, as a reader re-running the example would: the operator skill is already there
    // (409 skill.exists is fine) and every turn completes again.
    const again = startNode(['--import', 'tsx', join(REPO, 'examples/scripted-agent/src/main.ts')], {
      VEETBOT_URL: scene.baseUrl,
      VEETBOT_API_KEY: agentKey,
      VEETBOT_APPROVER_KEY: approverKey,
    });
    const rerun = await again.exited;
    const againOut = again.output();
    expect(rerun, againOut).toEqual({ code: 0, signal: null });
    expect(againOut).toMatch(/^skill exists: metric-summary \(made by an earlier run\)$/m);
    expect(printedItem(againOut, 'call_skill').trust).toBe('trusted_configuration');
  });
});

type ToolResultItem = StepOutcome['items'][number];

/** The ToolResultItem the example printed for `callId` (printItem: a header line, then its JSON). */
function printedItem(out: string, callId: string): ToolResultItem {
  const lines = out.split('\n');
  const at = lines.findIndex((l) => l.startsWith(`ToolResultItem ${callId} `));
  if (at < 0) throw new Error(`no ToolResultItem ${callId} printed:\n${out}`);
  return JSON.parse(lines[at + 1] ?? '') as ToolResultItem;
}
