import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  DynamicTool,
  McpElicitation,
  McpElicitationAnswer,
  McpElicitationCall,
  McpElicitationQuestion,
  RegistrationReport,
} from '@veetbot/ports';
import { AjvSchemaValidator } from '@veetbot/validation';
import { DefaultEgressPolicy, McpAdapter, operatorServers, validateServerConfig, type McpServerConfig } from '../src/index';
import { ELICITATION_MESSAGE_MAX_CHARACTERS } from '../src/elicitation/elicitation-request';
import { EVERYTHING_ENTRY } from './helpers/everything';
import { loopbackEgress, serverConfig } from './helpers/harness';
import { InputRequiredHttpServer } from './helpers/input-required-http-server';
import { context, MemoryCatalog, MemoryEvents, MemorySkills, MutableCredentials } from './helpers/fakes';

const ELICITING = join(dirname(fileURLToPath(import.meta.url)), 'helpers', 'eliciting-stdio-server.mjs');

/** A port that records what it was asked and answers with `answer` (or never, when null). */
class ScriptedElicitation implements McpElicitation {
  readonly asked: { call: McpElicitationCall; question: McpElicitationQuestion }[] = [];
  aborted = 0;
  constructor(private readonly answer: McpElicitationAnswer | null) {}
  ask(call: McpElicitationCall, question: McpElicitationQuestion, signal: AbortSignal): Promise<McpElicitationAnswer> {
    this.asked.push({ call, question });
    if (this.answer !== null) return Promise.resolve(this.answer);
    return new Promise((_, reject) =>
      signal.addEventListener(
        'abort',
        () => {
          this.aborted++;
          reject(new Error('stopped'));
        },
        { once: true },
      ),
    );
  }
}

function stdioConfig(serverId: string, args: string[], env?: Record<string, string>, credentialRef?: string): McpServerConfig {
  const verdict = validateServerConfig(
    {
      serverId,
      transport: 'stdio',
      endpoint: process.execPath,
      args,
      ...(env === undefined ? {} : { env }),
      ...(credentialRef === undefined ? { authScheme: 'none' } : { authScheme: 'env', authName: 'ELICIT_TOKEN', credentialRef }),
      sideEffect: 'none',
      risk: 'low',
      idempotency: 'read_only',
    },
    { source: 'operator', egress: new DefaultEgressPolicy() },
  );
  if (!verdict.ok) throw new Error(JSON.stringify(verdict.errors));
  return verdict.config;
}

const adapters: McpAdapter[] = [];
afterAll(async () => {
  await Promise.all(adapters.map((a) => a.shutdown()));
});

/** An adapter over one stdio server, its session prepared; `tool(name)` finds a registered tool. */
async function prepared(
  config: McpServerConfig,
  elicitation: McpElicitation | undefined,
  egress = new DefaultEgressPolicy(),
  secrets: Record<string, string> = {},
) {
  const events = new MemoryEvents();
  const adapter = new McpAdapter({
    servers: { list: async () => operatorServers([config]) },
    catalog: new MemoryCatalog(events),
    events,
    skills: new MemorySkills(),
    credentials: new MutableCredentials(secrets),
    validator: new AjvSchemaValidator(),
    egress,
    clock: { now: () => new Date() },
    ...(elicitation === undefined ? {} : { elicitation }),
  });
  adapters.push(adapter);
  const registered: DynamicTool[] = [];
  const register = async (tools: readonly DynamicTool[]): Promise<RegistrationReport> => {
    registered.push(...tools);
    return { source: 'mcp', registered: tools.map((t) => t.spec.name), rejected: [] };
  };
  await adapter.prepareSession(
    { tenantId: 'tenant-a', sessionId: 's1', principal: { tenant_id: 'tenant-a', principal_id: 'p', scopes: [] } },
    register,
  );
  const names = registered.map((t) => t.spec.name);
  return {
    names,
    tool: (name: string) => {
      const found = registered.find((t) => t.spec.name === name);
      if (found === undefined) throw new Error(`${name} not registered: ${names.join(', ')}`);
      return found;
    },
  };
}

const text = (result: { content?: readonly { type: string; text?: string }[] | undefined }) =>
  (result.content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('\n');

describe('a server form elicitation, through the port (docs/adr/0060)', () => {
  it('the real server-everything: the form reaches the port admitted, the accepted answer (with the defaults) reaches the server', async () => {
    const port = new ScriptedElicitation({ action: 'accept', content: { name: 'Ada Lovelace', check: true } });
    const { tool } = await prepared(stdioConfig('everything', [EVERYTHING_ENTRY, 'stdio']), port);
    const ctx = context({ sessionId: 's1' });
    const result = await tool('mcp.everything.trigger_elicitation_request').execute({}, ctx);
    expect(result.ok).toBe(true);
    const said = text(result);
    expect(said).toContain('- Name: Ada Lovelace');
    expect(said).toContain('- Agreed to terms: true');
    // SEP-1034: the server's defaults fill what the answer left out.
    expect(said).toContain('- Favorite Integer: 42');
    expect(said).toContain('- Favorite Number: 3.14');

    expect(port.asked).toHaveLength(1);
    const { call, question } = port.asked[0]!;
    expect(call).toMatchObject({
      tenantId: 'tenant-a',
      runId: ctx.runId,
      invocationId: ctx.invocationId,
      toolName: 'mcp.everything.trigger_elicitation_request',
      serverId: 'everything',
    });
    expect(question.message).toBe('Please provide inputs for the following fields:');
    const schema = question.requestedSchema as { properties: Record<string, Record<string, unknown>>; required: string[] };
    expect(schema.required).toEqual(['name']);
    expect(schema.properties.integer).toEqual({
      type: 'integer',
      title: 'Integer',
      description: expect.any(String),
      minimum: 1,
      maximum: 100,
      default: 42,
    });
    expect(schema.properties.titledMultipleSelectEnum!.items).toEqual({ anyOf: expect.any(Array) });
  }, 30_000);

  it('a declined question is declined to the server', async () => {
    const port = new ScriptedElicitation({ action: 'decline' });
    const { tool } = await prepared(stdioConfig('everything', [EVERYTHING_ENTRY, 'stdio']), port);
    const result = await tool('mcp.everything.trigger_elicitation_request').execute({}, context({ sessionId: 's1' }));
    expect(text(result)).toContain('User declined');
  }, 30_000);

  it('without a port nothing is advertised: the server sees no elicitation capability and offers no eliciting tool', async () => {
    const { names } = await prepared(stdioConfig('everything', [EVERYTHING_ENTRY, 'stdio']), undefined);
    expect(names).toContain('mcp.everything.echo');
    expect(names).not.toContain('mcp.everything.trigger_elicitation_request');
  }, 30_000);
});

describe('a hostile server eliciting', () => {
  const FLAT = {
    message: 'Your favourite colour?',
    requestedSchema: { type: 'object', properties: { colour: { type: 'string', default: 'blue' } }, required: ['colour'] },
  };
  let port: ScriptedElicitation;

  async function askWith(params: unknown, answer: McpElicitationAnswer | null, deadlineMs = 60_000, repeat = 1) {
    port = new ScriptedElicitation(answer);
    const env = { ELICIT_PARAMS: JSON.stringify(params), ELICIT_REPEAT: String(repeat) };
    const { tool } = await prepared(stdioConfig('hostile', [ELICITING], env), port);
    const result = await tool('mcp.hostile.ask').execute({}, context({ sessionId: 's1', deadlineAt: new Date(Date.now() + deadlineMs) }));
    return JSON.parse(text(result)) as Record<string, unknown>;
  }

  it('advertises form mode only', async () => {
    port = new ScriptedElicitation(null);
    const { tool } = await prepared(stdioConfig('hostile', [ELICITING]), port);
    const result = await tool('mcp.hostile.capabilities').execute({}, context({ sessionId: 's1' }));
    expect(JSON.parse(text(result))).toEqual({ elicitation: { form: {} } });
  }, 30_000);

  it('a flat form is asked; an answer that does not fit it is never sent (declined)', async () => {
    expect(await askWith(FLAT, { action: 'accept', content: { colour: 'red' } })).toEqual({ action: 'accept', content: { colour: 'red' } });
    expect(port.asked).toHaveLength(1);
    expect(await askWith(FLAT, { action: 'accept', content: { colour: 7 } })).toEqual({ action: 'decline' });
    expect(await askWith(FLAT, { action: 'accept', content: { colour: 'red', extra: 'x' } })).toEqual({ action: 'decline' });
  }, 30_000);

  it('a schema that is not flat, a huge message, junk params: declined without asking anyone', async () => {
    // The protocol's own schema (the SDK's) refuses a nested form with -32602 before ours sees it.
    const nested = { ...FLAT, requestedSchema: { type: 'object', properties: { a: { type: 'object', properties: {} } } } };
    expect(await askWith(nested, { action: 'accept', content: {} })).toEqual({ error: -32602 });
    expect(port.asked).toHaveLength(0);
    // What the protocol's schema lets through but ours does not: declined.
    const ref = { ...FLAT, requestedSchema: { type: 'object', properties: { a: { type: 'string', $ref: 'https://evil.example/s' } } } };
    expect(await askWith(ref, { action: 'accept', content: { a: 'x' } })).toEqual({ action: 'accept', content: { a: 'x' } });
    // (an unknown keyword is dropped, never passed on: the form asked is the rebuilt one)
    expect(port.asked[0]!.question.requestedSchema).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
      additionalProperties: false,
    });
    port.asked.length = 0;
    const badRequired = { ...FLAT, requestedSchema: { type: 'object', properties: {}, required: ['ghost'] } };
    expect(await askWith(badRequired, { action: 'accept', content: {} })).toEqual({ action: 'decline' });
    const badName = { ...FLAT, requestedSchema: { type: 'object', properties: { '__proto__ x': { type: 'string' } } } };
    expect(await askWith(badName, { action: 'accept', content: {} })).toEqual({ action: 'decline' });
    const huge = { ...FLAT, message: 'x' };
    expect(await askWith(huge, { action: 'accept', content: { colour: 'red' } }, 60_000, ELICITATION_MESSAGE_MAX_CHARACTERS + 1)).toEqual({
      action: 'decline',
    });
    expect(port.asked).toHaveLength(0);
    const many = {
      ...FLAT,
      requestedSchema: {
        type: 'object',
        properties: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, { type: 'string' }])),
      },
    };
    expect(await askWith(many, { action: 'accept', content: {} })).toEqual({ action: 'decline' });
    expect(port.asked).toHaveLength(0);
  }, 60_000);

  it('URL mode is refused by the protocol (not advertised), never asked', async () => {
    const url = { mode: 'url', message: 'Open this', url: 'https://evil.example/consent', elicitationId: 'e1' };
    const reply = await askWith(url, { action: 'accept', content: {} });
    expect(reply).toEqual({ error: -32602 });
    expect(port.asked).toHaveLength(0);
  }, 30_000);

  it('a server that puts its own credential into the question: the port sees it redacted (ADR 0018)', async () => {
    const token = 'elicit-secret-token-8f2a1c';
    port = new ScriptedElicitation({ action: 'decline' });
    const params = { ...FLAT, message: 'Confirm with $TOKEN please' };
    const config = stdioConfig('hostile', [ELICITING], { ELICIT_PARAMS: JSON.stringify(params) }, 'env:ELICIT_TOKEN');
    const { tool } = await prepared(config, port, new DefaultEgressPolicy(), { 'env:ELICIT_TOKEN': token });
    await tool('mcp.hostile.ask').execute({}, context({ sessionId: 's1' }));
    expect(port.asked).toHaveLength(1);
    expect(port.asked[0]!.question.message).not.toContain(token);
    expect(port.asked[0]!.question.message).toContain('[redacted credential]');
  }, 30_000);

  it('two calls in flight on one connection: neither run is asked (declined), rather than the wrong one', async () => {
    port = new ScriptedElicitation({ action: 'accept', content: { colour: 'red' } });
    const env = { ELICIT_PARAMS: JSON.stringify(FLAT) };
    const { tool } = await prepared(stdioConfig('hostile', [ELICITING], env), port);
    const ask = tool('mcp.hostile.ask');
    const results = await Promise.all([ask.execute({}, context({ sessionId: 's1' })), ask.execute({}, context({ sessionId: 's1' }))]);
    expect(results.map((r) => JSON.parse(text(r)))).toEqual([{ action: 'decline' }, { action: 'decline' }]);
    expect(port.asked).toHaveLength(0);
  }, 30_000);

  it("the call's deadline first: the port's wait is stopped and the server is answered cancel", async () => {
    const started = Date.now();
    const reply = await askWith(FLAT, null, 1_500);
    expect(reply).toEqual({ action: 'cancel' });
    expect(port.asked).toHaveLength(1);
    expect(port.aborted).toBe(1);
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 30_000);
});

describe('2026-07-28: input_required (SEP-2322)', () => {
  const server = new InputRequiredHttpServer();
  let url: string;
  beforeAll(async () => {
    url = await server.start();
  });
  afterAll(() => server.stop());
  const httpConfig = () =>
    serverConfig({
      serverId: 'mrtr',
      transport: 'http',
      endpoint: url,
      authScheme: 'none',
      sideEffect: 'none',
      risk: 'low',
      idempotency: 'read_only',
    });

  it('the embedded question is asked; the call is re-sent with the answer and the requestState echoed byte for byte', async () => {
    server.rounds = 1;
    server.calls.length = 0;
    const port = new ScriptedElicitation({ action: 'accept', content: { confirmed: true } });
    const { tool } = await prepared(httpConfig(), port, loopbackEgress());
    const result = await tool('mcp.mrtr.confirm').execute({}, context({ sessionId: 's1' }));
    expect(result.ok).toBe(true);
    expect(JSON.parse(text(result))).toEqual({ ask: { action: 'accept', content: { confirmed: true } } });
    expect(server.calls).toHaveLength(2);
    expect(server.calls[0]).toMatchObject({ inputResponses: undefined, requestState: undefined });
    expect(server.calls[1]!.requestState).toBe(server.requestState);
    expect(server.calls[1]!.id).not.toEqual(server.calls[0]!.id);
    expect(port.asked.map((a) => a.question.message)).toEqual(['Proceed?']);
  }, 30_000);

  it('a server that never stops asking: at most 4 rounds, then tool.upstream_error', async () => {
    server.rounds = 'forever';
    server.calls.length = 0;
    const port = new ScriptedElicitation({ action: 'decline' });
    const { tool } = await prepared(httpConfig(), port, loopbackEgress());
    const result = await tool('mcp.mrtr.confirm').execute({}, context({ sessionId: 's1' }));
    expect(result).toMatchObject({ ok: false, failure: { reason_code: 'tool.upstream_error', external_text: null } });
    expect(server.calls).toHaveLength(1 + 4);
    expect(server.calls.slice(1).every((c) => c.requestState === server.requestState)).toBe(true);
  }, 30_000);

  it('a result that embeds 10 questions: at most 4 are asked at once, the rest declined', async () => {
    server.rounds = 1;
    server.requests = 10;
    server.calls.length = 0;
    // A port that takes its time, so the questions are open together.
    const answering = new ScriptedElicitation({ action: 'accept', content: { confirmed: true } });
    const slow: McpElicitation = {
      ask: async (call, question, signal) => {
        await new Promise((r) => setTimeout(r, 300));
        return answering.ask(call, question, signal);
      },
    };
    const { tool } = await prepared(httpConfig(), slow, loopbackEgress());
    const result = await tool('mcp.mrtr.confirm').execute({}, context({ sessionId: 's1' }));
    server.requests = 1;
    expect(result.ok).toBe(true);
    const responses = JSON.parse(text(result)) as Record<string, { action: string }>;
    const actions = Object.values(responses).map((r) => r.action);
    expect(actions).toHaveLength(10);
    expect(actions.filter((a) => a === 'accept')).toHaveLength(4);
    expect(actions.filter((a) => a === 'decline')).toHaveLength(6);
    expect(answering.asked).toHaveLength(4);
  }, 30_000);

  it('a result that names no resultType is complete (SEP-2322), not a failure', async () => {
    const { tool } = await prepared(httpConfig(), undefined, loopbackEgress());
    const result = await tool('mcp.mrtr.bare').execute({}, context({ sessionId: 's1' }));
    expect(result).toMatchObject({ ok: true, content: [{ type: 'text', text: 'bare' }] });
  }, 30_000);

  it('without a port the input is not given: tool.upstream_error, not an unreachable server', async () => {
    server.rounds = 1;
    server.calls.length = 0;
    const { tool } = await prepared(httpConfig(), undefined, loopbackEgress());
    const result = await tool('mcp.mrtr.confirm').execute({}, context({ sessionId: 's1' }));
    expect(result).toMatchObject({ ok: false, failure: { reason_code: 'tool.upstream_error' } });
    expect(server.calls).toHaveLength(1);
  }, 30_000);
});
