import { REASON_CODES, type Principal, type ToolResultItem } from '@veetbot/domain';
import type { GatewayBinding, GatewayCall, GatewayCallResult, GatewayRuntime, GatewayTool } from '@veetbot/ports';
import { connectGatewayClient } from '@veetbot/mcp-test-client';
import { afterEach, describe, expect, it } from 'vitest';
import { CALL_ID_META, McpGateway, RUN_HEADER, type McpGatewaySettings } from '@veetbot/mcp-gateway';

/*
 * @veetbot/mcp-gateway alone, over a scripted GatewayRuntime, driven by the SDK's own client
 * whose fetch is the gateway's (no socket): the mapping of every outcome to MCP, the binding
 * rules and the stateful session's limits. It lives here, not in the package, because only an
 * app's tests may reach the SDK's client side beside the adapter (tooling/boundaries). The real
 * api, worker and pipeline behind the same client: mcp-gateway.test.ts.
 */

const RUN = '00000000-0000-4000-8000-000000000001';
const alice: Principal = { tenant_id: 'tenant-a', principal_id: 'alice', scopes: [] };
const bob: Principal = { tenant_id: 'tenant-b', principal_id: 'bob', scopes: [] };

const TOOLS: GatewayTool[] = [
  { name: 'math.evaluate', description: 'Evaluate.', inputSchema: { type: 'object', properties: { expression: { type: 'string' } } } },
];

const ENVELOPED =
  '⟦untrusted source="math.evaluate" trust="internal_tool" nonce="0123456789abcdef"⟧\n14\n⟦/untrusted nonce="0123456789abcdef"⟧';

function item(status: string, reason: string): ToolResultItem {
  return {
    call_id: 'c',
    tool_name: 'math.evaluate',
    outcome: { status, action: 'math.evaluate', reason_code: reason, message: 'm', retryable: false, remediation: 'none' },
    content: [{ type: 'text', text: ENVELOPED, trust: 'internal_tool' }],
    structured: { value: 14 },
    trust: 'internal_tool',
    truncated: false,
    artifact_id: null,
  } as ToolResultItem;
}

class ScriptedRuntime implements GatewayRuntime {
  next: GatewayCallResult = { kind: 'concluded', item: item('succeeded', 'tool.ok'), invocationId: 'inv-1', stepNumber: 1 };
  readonly calls: GatewayCall[] = [];
  readonly callers: Principal[] = [];
  readonly opened: GatewayBinding[] = [];
  readonly closed: string[] = [];
  readonly cancelled: string[] = [];
  /** Runs that no longer take calls (their deadline passed, or they were cancelled). */
  readonly ended = new Set<string>();
  async open(principal: Principal): Promise<GatewayBinding> {
    const n = this.opened.length + 1;
    const binding = { principal, sessionId: `s-${n}`, runId: n === 1 ? RUN : `00000000-0000-4000-8000-${String(n).padStart(12, '0')}` };
    this.opened.push(binding);
    return binding;
  }
  async bindRun(principal: Principal, runId: string): Promise<GatewayBinding | null> {
    return principal.tenant_id === 'tenant-a' && runId === RUN ? { principal, sessionId: 's-named', runId } : null;
  }
  async listTools(): Promise<readonly GatewayTool[]> {
    return TOOLS;
  }
  readonly callRuns: string[] = [];
  async call(b: GatewayBinding, call: GatewayCall): Promise<GatewayCallResult> {
    if (!TOOLS.some((t) => t.name === call.toolName)) return { kind: 'refused', code: 'tool.unknown', message: 'Unknown tool.' };
    this.calls.push(call);
    this.callers.push(b.principal);
    this.callRuns.push(b.runId);
    if (this.ended.has(b.runId)) return { kind: 'refused', code: 'run.not_active', message: 'The run is not running.' };
    return this.next;
  }
  async cancel(b: GatewayBinding): Promise<void> {
    this.cancelled.push(b.runId);
  }
  async close(b: GatewayBinding): Promise<void> {
    this.closed.push(b.sessionId);
  }
}

const gateways: McpGateway[] = [];
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
});

function setup(settings: Partial<McpGatewaySettings> = {}) {
  const runtime = new ScriptedRuntime();
  const errors: unknown[] = [];
  const gateway = new McpGateway({ runtime, settings, onError: (e) => errors.push(e) });
  gateways.push(gateway);
  const connect = (principal: Principal, era: 'modern' | 'legacy' | 'auto', headers: Record<string, string> = {}) =>
    connectGatewayClient({
      url: 'http://127.0.0.1/mcp',
      headers,
      era,
      fetch: (url, init) => gateway.fetch(new Request(url, init), principal),
    });
  return { runtime, gateway, errors, connect };
}

describe('McpGateway', () => {
  it('lists the pinned tools exactly and maps a success: structuredContent is the six-field outcome', async () => {
    const { connect, runtime } = setup();
    const { client } = await connect(alice, 'modern', { [RUN_HEADER]: RUN });
    expect((await client.listTools()).tools).toEqual([
      { name: 'math.evaluate', description: 'Evaluate.', inputSchema: TOOLS[0]!.inputSchema },
    ]);
    const result = await client.callTool({ name: 'math.evaluate', arguments: { expression: '2*7' } });
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toEqual(item('succeeded', 'tool.ok').outcome);
    // The pipeline's text, its trust envelope included, with the part's label beside it.
    expect(result.content).toEqual([{ type: 'text', text: ENVELOPED, _meta: { 'veetbot/trust': 'internal_tool' } }]);
    expect(result._meta).toMatchObject({
      'veetbot/invocation_id': 'inv-1',
      'veetbot/result': { structured: { value: 14 }, trust: 'internal_tool' },
    });
    // No call id given: one is minted, and the call defaults to the strictest context label.
    expect(runtime.calls[0]).toMatchObject({ toolName: 'math.evaluate', contextTrust: ['external_untrusted'] });
    expect(runtime.calls[0]!.callId).toMatch(/^mcp:[0-9a-f-]{36}$/);
  });

  it('failed, denied and uncertain are isError; waiting, suspended and running say so and name the call id', async () => {
    const { connect, runtime } = setup();
    const { client } = await connect(alice, 'modern', { [RUN_HEADER]: RUN });
    const call = { name: 'math.evaluate', arguments: {}, _meta: { [CALL_ID_META]: 'k-1' } };
    for (const [status, reason] of [
      ['failed', 'tool.arguments_invalid'],
      ['denied', 'policy.scope.missing'],
      ['uncertain', 'tool.outcome_unknown'],
    ] as const) {
      // Rendered with no content (nothing ran, or nothing came back): the text is the reason
      // code's one fixed message from the domain's table, never the outcome's own field.
      runtime.next = { kind: 'concluded', item: { ...item(status, reason), content: [] }, invocationId: 'inv', stepNumber: 1 };
      const result = await client.callTool(call);
      expect(result.isError, status).toBe(true);
      expect(result.structuredContent, status).toMatchObject({ status, reason_code: reason });
      expect(result.content, status).toEqual([{ type: 'text', text: REASON_CODES[reason].message }]);
    }
    // With content of its own, that content is the text (the pipeline's, enveloped).
    runtime.next = { kind: 'concluded', item: item('failed', 'tool.error'), invocationId: 'inv', stepNumber: 1 };
    expect((await client.callTool(call)).content).toEqual([{ type: 'text', text: ENVELOPED, _meta: { 'veetbot/trust': 'internal_tool' } }]);
    // A success with structured content and no text carries it as one JSON text item too.
    runtime.next = { kind: 'concluded', item: { ...item('succeeded', 'tool.ok'), content: [] }, invocationId: 'inv', stepNumber: 1 };
    const bare = await client.callTool(call);
    expect(bare.isError).toBe(false);
    expect(bare.content).toEqual([{ type: 'text', text: JSON.stringify(bare.structuredContent) }]);
    expect(JSON.parse((bare.content[0] as { text: string }).text)).toEqual(item('succeeded', 'tool.ok').outcome);
    runtime.next = { kind: 'waiting_for_approval', callId: 'k-1', invocationId: 'inv', approvalId: 'ap-1', stepNumber: 1 };
    const waiting = await client.callTool(call);
    expect(waiting).toMatchObject({
      isError: true,
      structuredContent: { status: 'waiting_for_approval', approval_id: 'ap-1', call_id: 'k-1' },
    });
    expect(JSON.stringify(waiting.content)).toContain('k-1');
    runtime.next = { kind: 'suspended', callId: 'k-1', invocationId: 'inv', suspendedKind: 'user_input', stepNumber: 1 };
    expect(await client.callTool(call)).toMatchObject({ isError: true, structuredContent: { status: 'suspended', kind: 'user_input' } });
    runtime.next = { kind: 'running', callId: 'k-1', stepNumber: 1 };
    expect(await client.callTool(call)).toMatchObject({ isError: true, structuredContent: { status: 'running' } });
    runtime.next = { kind: 'refused', code: 'run.not_active', message: 'The run is not running.' };
    expect(await client.callTool(call)).toMatchObject({
      isError: true,
      structuredContent: { status: 'refused', reason_code: 'run.not_active' },
    });
    expect(runtime.calls.every((c) => c.callId === 'k-1')).toBe(true);
  });

  it('an unknown tool is a JSON-RPC -32602 error, not a tool result', async () => {
    const { connect, runtime } = setup();
    const { client } = await connect(alice, 'modern', { [RUN_HEADER]: RUN });
    const error = await client.callTool({ name: 'nope.nothing', arguments: {} }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: -32602 });
    expect(String(error)).toContain('Unknown tool: "nope.nothing"');
    expect(runtime.calls).toEqual([]);
  });

  it('a key-only client (2026-07-28 or auto) acts in its key default run: opened once, reused across connections, reopened when it ends', async () => {
    const { connect, runtime, gateway } = setup();
    const seen: (string | null)[] = [];
    const { client } = await connectGatewayClient({
      url: 'http://127.0.0.1/mcp',
      headers: {},
      era: 'modern',
      fetch: async (url, init) => {
        const response = await gateway.fetch(new Request(url, init), alice);
        seen.push(response.headers.get('veetbot-run-id'));
        return response;
      },
    });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['math.evaluate']);
    expect((await client.callTool({ name: 'math.evaluate', arguments: {} })).isError).toBe(false);
    // Another connection of the same key, in auto mode as a stock client runs: the same run.
    const auto = await connect(alice, 'auto');
    expect(auto.client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    await auto.client.callTool({ name: 'math.evaluate', arguments: {} });
    expect(runtime.opened).toHaveLength(1);
    expect(runtime.callRuns).toEqual([RUN, RUN]);
    // The response names the run it acted in, as an initialize response does.
    expect(seen).toContain(RUN);
    // Another key of the tenant, or another agent id, has a default of its own.
    await (await connect({ ...alice, principal_id: 'alice-2' }, 'modern')).client.listTools();
    await (await connect(alice, 'modern', { 'Veetbot-Agent-Id': 'other-agent' })).client.listTools();
    expect(runtime.opened.map((b) => b.principal.principal_id)).toEqual(['alice', 'alice-2', 'alice']);
    expect(gateway.heldSessions).toBe(0);

    // The run ended (cancelled, past its deadline): the next call opens the next run and is made there once.
    runtime.ended.add(RUN);
    const after = await client.callTool({ name: 'math.evaluate', arguments: {} });
    expect(after.isError).toBe(false);
    expect(runtime.opened).toHaveLength(4);
    const next = runtime.opened[3]!;
    expect(runtime.callRuns.slice(2)).toEqual([RUN, next.runId]);
    expect(runtime.closed).toContain('s-1');
    await auto.client.callTool({ name: 'math.evaluate', arguments: {} });
    expect(runtime.callRuns.at(-1)).toBe(next.runId);
    expect(runtime.opened).toHaveLength(4);
  });

  it("a key's default run opens once under concurrent first requests, and only when tools are asked for", async () => {
    const { connect, runtime } = setup();
    // Connecting (auto mode probes with server/discover) opens nothing.
    const probe = await connect(alice, 'auto');
    expect(probe.client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(runtime.opened).toEqual([]);
    const clients = await Promise.all(Array.from({ length: 5 }, () => connect(alice, 'modern')));
    await Promise.all(clients.map((c) => c.client.listTools()));
    expect(runtime.opened).toHaveLength(1);
  });

  it('default runs are capped per tenant: the least recently used one ends first', async () => {
    const { connect, runtime } = setup({ maxSessionsPerTenant: 2 });
    for (const agent of ['a-1', 'a-2', 'a-1', 'a-3'])
      await (await connect(alice, 'modern', { 'Veetbot-Agent-Id': agent })).client.listTools();
    // a-1 was used again before a-3 opened: a-2 (s-2) is the one that made room.
    expect(runtime.opened).toHaveLength(3);
    expect(runtime.closed).toEqual(['s-2']);
  });

  it("a key's default run left idle ends, and its session is closed", async () => {
    const { connect, runtime } = setup({ sessionIdleMs: 1000 });
    await (await connect(alice, 'modern')).client.listTools();
    expect(runtime.opened).toHaveLength(1);
    for (let i = 0; i < 100 && runtime.closed.length === 0; i += 1) await new Promise((r) => setTimeout(r, 50));
    expect(runtime.closed).toEqual(['s-1']);
  });

  it('an unexpected runtime failure is logged and answered without its text', async () => {
    const { connect, runtime, errors } = setup();
    runtime.listTools = async () => {
      throw new Error('connection to 10.0.0.5 refused');
    };
    const { client } = await connect(alice, 'modern', { [RUN_HEADER]: RUN });
    const failure = await client.listTools().catch((e: Error) => e);
    expect(String(failure)).toContain('internal error');
    expect(String(failure)).not.toContain('10.0.0.5');
    expect(errors).toHaveLength(1);
  });

  it('a 2025 session opened on initialize is held per key, capped per tenant, and DELETE closes what it opened', async () => {
    const { connect, runtime, gateway } = setup({ maxSessionsPerTenant: 2 });
    const one = await connect(alice, 'legacy');
    await connect(alice, 'legacy');
    expect(gateway.heldSessions).toBe(2);
    // Another tenant has its own allowance.
    await connect(bob, 'legacy');
    expect(gateway.heldSessions).toBe(3);
    // Bob cannot use Alice's MCP session id.
    const stolen = await gateway.fetch(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'Mcp-Session-Id': one.transport.sessionId ?? '',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      }),
      bob,
    );
    expect(stolen.status).toBe(404);
    await one.transport.terminateSession();
    expect(runtime.closed).toEqual(['s-1']);
    expect(gateway.heldSessions).toBe(2);

    // A session bound to a run the client named is left open: its owner closes it through the API.
    const named = await connect(alice, 'legacy', { [RUN_HEADER]: RUN });
    await named.transport.terminateSession();
    expect(runtime.closed).toEqual(['s-1']);
  });

  it('at the per-tenant cap the least recently used session is evicted; its next request is 404 and the client initializes again', async () => {
    const { connect, runtime, gateway } = setup({ maxSessionsPerTenant: 3 });
    const first = await connect(alice, 'legacy');
    const second = await connect(alice, 'legacy');
    const third = await connect(alice, 'legacy');
    const theirs = await connect(bob, 'legacy');
    // The first is used again: the second is now the least recently used of Alice's.
    await first.client.listTools();
    const fourth = await connect(alice, 'legacy');
    expect(gateway.heldSessions).toBe(4);
    expect(runtime.closed).toEqual(['s-2']);
    // The evicted session's id is the protocol's 404 (MCP: a client then initializes again).
    const evicted = await gateway.fetch(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'Mcp-Session-Id': second.transport.sessionId ?? '',
          'Mcp-Protocol-Version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} }),
      }),
      alice,
    );
    expect(evicted.status).toBe(404);
    await expect(second.client.listTools()).rejects.toThrow();
    // Everyone else's sessions, Bob's included, still answer.
    for (const live of [first, third, fourth, theirs]) expect((await live.client.listTools()).tools).toHaveLength(1);
    // 70 more initializes, none closing: every one is served, the cap holds, the idlest go first.
    for (let i = 0; i < 70; i += 1) await connect(alice, 'legacy');
    expect(gateway.heldSessions).toBe(4);
    expect(runtime.closed.slice(0, 4)).toEqual(['s-2', 's-1', 's-3', 's-5']);
    expect((await theirs.client.listTools()).tools).toHaveLength(1);
  });

  it('at the process cap the tenant holding the most gives way, never another tenant with fewer', async () => {
    const { connect, runtime, gateway } = setup({ maxSessions: 3, maxSessionsPerTenant: 3 });
    const bobs = await connect(bob, 'legacy');
    await connect(alice, 'legacy');
    await connect(alice, 'legacy');
    await connect(bob, 'legacy');
    expect(gateway.heldSessions).toBe(3);
    expect(runtime.closed).toEqual(['s-2']);
    expect((await bobs.client.listTools()).tools).toHaveLength(1);
  });

  it("a held session's calls act as the key that sends them, its scopes as they are now", async () => {
    const runtime = new ScriptedRuntime();
    const gateway = new McpGateway({ runtime });
    gateways.push(gateway);
    let current: Principal = { ...alice, scopes: ['demo.write'] };
    const { client } = await connectGatewayClient({
      url: 'http://127.0.0.1/mcp',
      headers: {},
      era: 'legacy',
      fetch: (url, init) => gateway.fetch(new Request(url, init), current),
    });
    current = { ...alice, scopes: [] };
    await client.callTool({ name: 'math.evaluate', arguments: {} });
    expect(runtime.callers).toEqual([{ ...alice, scopes: [] }]);
  });

  it('speaks 2025-06-18 to a client that asks for it, and serves a 2025 request with no session that names its run', async () => {
    const { gateway } = setup();
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      gateway.fetch(
        new Request('http://127.0.0.1/mcp', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
          body: JSON.stringify(body),
        }),
        alice,
      );
    const init = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
    });
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await init.text()).toContain('"protocolVersion":"2025-06-18"');

    const listed = await post(
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
      { 'Mcp-Protocol-Version': '2025-06-18', [RUN_HEADER]: RUN },
    );
    expect(listed.status).toBe(200);
    expect(await listed.text()).toContain('"name":"math.evaluate"');
  });

  it('an idle 2025 session ends as if deleted', async () => {
    const { connect, runtime, gateway } = setup({ sessionIdleMs: 1000 });
    await connect(alice, 'legacy');
    expect(gateway.heldSessions).toBe(1);
    for (let i = 0; i < 100 && gateway.heldSessions > 0; i += 1) await new Promise((r) => setTimeout(r, 50));
    expect(gateway.heldSessions).toBe(0);
    expect(runtime.closed).toEqual(['s-1']);
  });

  it('refuses a bad agent id or deadline on initialize, and a 2025 request with neither session nor run', async () => {
    const { connect, gateway, runtime } = setup();
    await expect(connect(alice, 'legacy', { 'Veetbot-Run-Deadline-Seconds': '99999999' })).rejects.toThrow();
    await expect(connect(alice, 'legacy', { 'Veetbot-Agent-Id': 'a b' })).rejects.toThrow();
    expect(runtime.opened).toEqual([]);
    const bare = await gateway.fetch(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      }),
      alice,
    );
    expect(bare.status).toBe(400);
    expect(await bare.json()).toMatchObject({ error: { data: { code: 'mcp.session_required' } } });
  });
});
