import { VeetbotClient, type Session, type StepOutcome } from '@veetbot/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, openApiHarness, type ApiHarness } from './harness';

// § Control tools, tool.call over the HTTP API: sessions opened with deferred_tools, the
// deferred tool index route, and a step whose tool.call runs as the tool it names.

let h: ApiHarness;
let client: VeetbotClient;
beforeAll(async () => {
  h = await openApiHarness();
  client = new VeetbotClient({ baseUrl: 'http://api.test', apiKey: h.a.key, fetch: (input, init) => h.api.app.request(input, init) });
}, 120_000);
afterAll(async () => {
  await h?.close();
});

describe('deferred tools over the API', () => {
  it('opens a session with deferred_tools: the session names them, and their definitions are left out of tools', async () => {
    const opened = await h.call('POST', '/v1/sessions', {
      body: { agent_id: 'agent-1', deferred_tools: ['demo.external_write', 'math.evaluate'] },
    });
    expect(opened.status).toBe(201);
    const session = (await opened.json()) as Session;
    expect(session.deferred_tools).toEqual(['demo.external_write', 'math.evaluate']);
    const advertised = session.tools.map((t) => t.name);
    expect(advertised).toContain('tool.call');
    expect(advertised).not.toContain('math.evaluate');
    expect(advertised).not.toContain('demo.external_write');
    expect((await client.getSession(session.id)).deferred_tools).toEqual(['demo.external_write', 'math.evaluate']);
    // Without deferred_tools: none, and every definition is advertised.
    const plain = await client.openSession({ agent_id: 'agent-1' });
    expect(plain.deferred_tools).toEqual([]);
    expect(plain.tools.map((t) => t.name)).toContain('math.evaluate');
  });

  it('GET /v1/sessions/{id}/deferred-tools answers one line per deferred tool, from the pinned spec', async () => {
    const session = await client.openSession({ agent_id: 'agent-1', deferred_tools: ['math.evaluate', 'demo.external_write'] });
    const index = await client.getDeferredTools(session.id);
    expect(index.tools.map((t) => t.name)).toEqual(['math.evaluate', 'demo.external_write']);
    for (const entry of index.tools) {
      expect(entry.description).not.toContain('\n');
      expect(Array.from(entry.description).length).toBeLessThanOrEqual(200);
      expect(entry).not.toHaveProperty('input_schema');
    }
    // demo.external_write's description is one line of more than 100 characters: kept whole.
    expect(index.tools[1]?.description).toBe(
      'Send one line to the demo outbox, an external system outside the workspace. Every call appends: sending the same line twice sends it twice.',
    );
    // math.evaluate's first line is over 200 characters: cut, marked.
    expect(Array.from(index.tools[0]!.description)).toHaveLength(200);
    expect(index.tools[0]?.description.endsWith('…')).toBe(true);
    const raw = await h.call('GET', `/v1/sessions/${session.id}/deferred-tools`);
    expect(raw.status).toBe(200);
    expect(await raw.json()).toEqual(index);
  });

  it('refuses deferred_tools outside the pin or naming a control tool with 400 request.invalid', async () => {
    const outside = await errorOf(await h.call('POST', '/v1/sessions', { body: { agent_id: 'a', deferred_tools: ['nope.nothing'] } }));
    expect(outside).toMatchObject({ status: 400, code: 'request.invalid' });
    expect(outside.message).toContain('deferred_tools.0');
    const control = await errorOf(
      await h.call('POST', '/v1/sessions', { body: { agent_id: 'a', deferred_tools: ['math.evaluate', 'conversation.ask_user'] } }),
    );
    expect(control).toMatchObject({ status: 400, code: 'request.invalid' });
    expect(control.message).toContain('deferred_tools.1');
    const noToolCall = await errorOf(
      await h.call('POST', '/v1/sessions', { body: { agent_id: 'a', enabled_tools: ['math.*'], deferred_tools: ['math.evaluate'] } }),
    );
    expect(noToolCall).toMatchObject({ status: 400, code: 'request.invalid' });
  });

  it('answers 404 for the index of a session that does not exist, or of another tenant', async () => {
    expect((await errorOf(await h.call('GET', `/v1/sessions/${crypto.randomUUID()}/deferred-tools`))).status).toBe(404);
    const session = await client.openSession({ agent_id: 'agent-1', deferred_tools: ['math.evaluate'] });
    expect((await errorOf(await h.call('GET', `/v1/sessions/${session.id}/deferred-tools`, { key: h.b.key }))).status).toBe(404);
  });

  it('runs a step whose tool.call reaches a deferred tool: the item answers the call id under the tool’s own name', async () => {
    const session = await client.openSession({ agent_id: 'agent-1', deferred_tools: ['math.evaluate'] });
    const run = await client.createRun({ session_id: session.id, deadline_seconds: 300 });
    const submitted = await client.submitStep(run.id, {
      step_number: 1,
      calls: [
        {
          call_id: 'call_deferred',
          tool_name: 'tool.call',
          arguments: { name: 'math.evaluate', arguments: { expression: '6*7' } },
          context_trust: ['user'],
        },
        { call_id: 'call_bad', tool_name: 'tool.call', arguments: { name: 'math.evaluate' }, context_trust: ['user'] },
      ],
      wait_seconds: 20,
    });
    const outcome: StepOutcome = submitted.outcome;
    expect(outcome.items.map((i) => [i.call_id, i.tool_name, i.outcome.status, i.outcome.reason_code])).toEqual([
      ['call_deferred', 'math.evaluate', 'succeeded', 'tool.ok'],
      ['call_bad', 'tool.call', 'failed', 'tool.arguments_invalid'],
    ]);
    expect(outcome.items[0]?.structured).toEqual({ value: 42 });
    const invocations = await client.listInvocations({ run_id: run.id });
    expect(invocations.invocations.map((i) => [i.call_id, i.tool_name]).sort()).toEqual([
      ['call_bad', 'tool.call'],
      ['call_deferred', 'math.evaluate'],
    ]);
  });
});
