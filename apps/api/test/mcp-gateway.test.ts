import type { Server as HttpServer } from 'node:http';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Approval, InvocationList, Run, Session } from '@veetbot/client';
import { OUTCOME_FIELDS, REASON_CODES } from '@veetbot/domain';
import { CALL_ID_META, CONTEXT_TRUST_META, RUN_HEADER } from '@veetbot/mcp-gateway';
import { connectGatewayClient, type GatewayClient } from '@veetbot/mcp-test-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionTenantKey } from '@veetbot/composition';
import { openApiHarness, sessionAndRun, type ApiHarness } from './harness';

/*
 * The MCP gateway face (docs/adr/0044) driven by the MCP SDK's own 2.x client over real HTTP
 * against the real api with its in-process worker (PGlite): every tools/call is a governed call
 * of the one pipeline, with its row, approvals and idempotency.
 */

async function listen(h: ApiHarness): Promise<{ server: HttpServer; url: string }> {
  const server = createAdaptorServer({ fetch: h.api.app.fetch }) as HttpServer;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

const close = (server: HttpServer | undefined) =>
  new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));

/** Collects the response headers of every request the client makes (the initialize answer's ids). */
function recordingFetch(): { fetch: (url: string | URL, init?: RequestInit) => Promise<Response>; headers: Headers[] } {
  const headers: Headers[] = [];
  return {
    headers,
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      headers.push(response.headers);
      return response;
    },
  };
}

async function json<T>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

describe('the MCP gateway face with the worker running', () => {
  let h: ApiHarness;
  let server: HttpServer;
  let url: string;
  const clients: GatewayClient[] = [];

  beforeAll(async () => {
    h = await openApiHarness();
    ({ server, url } = await listen(h));
  });
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await close(server);
    await h.close();
  });

  const connect = async (
    headers: Record<string, string>,
    era: 'modern' | 'legacy' | 'auto',
    fetchImpl?: ReturnType<typeof recordingFetch>['fetch'],
  ) => {
    const connected = await connectGatewayClient({ url, headers, era, ...(fetchImpl === undefined ? {} : { fetch: fetchImpl }) });
    clients.push(connected.client);
    return connected;
  };

  it('a 2025 client: initialize opens a session and run, tools/list is the pin exactly, a call runs once with its row', async () => {
    const recorder = recordingFetch();
    const { client } = await connect({ Authorization: `Bearer ${h.a.key}` }, 'legacy', recorder.fetch);
    expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    // The set is pinned: tools without listChanged, so notifications/tools/list_changed never comes.
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: false });
    const sessionId = recorder.headers.map((x) => x.get('veetbot-session-id')).find((v) => v !== null) ?? '';
    const runId = recorder.headers.map((x) => x.get('veetbot-run-id')).find((v) => v !== null) ?? '';
    const session = await json<Session>(await h.call('GET', `/v1/sessions/${sessionId}`));
    expect(session.status).toBe('open');
    expect((await json<Run>(await h.call('GET', `/v1/runs/${runId}`))).session_id).toBe(sessionId);

    const listed = await client.listTools();
    expect(listed.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }))).toEqual(session.tools);
    expect(await client.ping()).toEqual({});
    expect(await client.setLoggingLevel('warning')).toEqual({});

    const call = { name: 'math.evaluate', arguments: { expression: '2*(3+4)' }, _meta: { [CALL_ID_META]: 'calc-1' } };
    const first = await client.callTool(call);
    expect(first.isError).toBe(false);
    expect(Object.keys(first.structuredContent ?? {}).sort()).toEqual([...OUTCOME_FIELDS].sort());
    expect(first.structuredContent).toMatchObject({ status: 'succeeded', reason_code: 'tool.ok', action: 'math.evaluate' });
    expect(JSON.stringify(first.content)).toContain('14');
    // A repeat of the call id is the recorded outcome, never a second execution.
    const again = await client.callTool(call);
    expect(again.structuredContent).toEqual(first.structuredContent);
    const rows = await json<InvocationList>(await h.call('GET', `/v1/invocations?run_id=${runId}`));
    expect(rows.invocations.map((r) => [r.call_id, r.tool_name, r.status])).toEqual([['calc-1', 'math.evaluate', 'succeeded']]);
    expect(first._meta?.['veetbot/invocation_id']).toBe(rows.invocations[0]!.id);
  });

  it('a 2026-07-28 client names its run on every request; the same call, the same pipeline', async () => {
    const { sessionId, runId } = await sessionAndRun(h);
    const { client } = await connect({ Authorization: `Bearer ${h.a.key}`, [RUN_HEADER]: runId }, 'modern');
    expect(client.getProtocolEra()).toBe('modern');
    const session = await json<Session>(await h.call('GET', `/v1/sessions/${sessionId}`));
    const listed = await client.listTools();
    expect(listed.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }))).toEqual(session.tools);
    const result = await client.callTool({
      name: 'math.evaluate',
      arguments: { expression: '6*7' },
      _meta: { [CONTEXT_TRUST_META]: ['user'] },
    });
    expect(result.structuredContent).toMatchObject({ status: 'succeeded' });
    expect(JSON.stringify(result.content)).toContain('42');
    // A call that fails before the tool runs is an error result with the same six fields, and its
    // text is the reason code's one fixed message (conformance tools-call-error; docs/adr/0061).
    // (A key without demo.write: denied by policy before anything runs, nothing rendered.)
    const narrow = await provisionTenantKey(h.system.stores, {
      tenantId: h.a.tenantId,
      tenantName: h.a.tenantId,
      principalId: `${h.a.tenantId}-narrow`,
      scopes: ['workspace.read'],
      now: new Date(),
    });
    const { client: narrowClient } = await connect({ Authorization: `Bearer ${narrow.key}`, [RUN_HEADER]: runId }, 'modern');
    const denied = await narrowClient.callTool({ name: 'demo.external_write', arguments: { line: 'x' } });
    expect(denied.isError).toBe(true);
    expect(denied.structuredContent).toMatchObject({ status: 'denied', reason_code: 'policy.scope.missing' });
    expect(denied.content).toEqual([{ type: 'text', text: REASON_CODES['policy.scope.missing'].message }]);
    // A failure with the platform's own text keeps that text.
    const failed = await client.callTool({ name: 'math.evaluate', arguments: { nope: 1 } });
    expect(failed).toMatchObject({ isError: true, structuredContent: { status: 'failed', reason_code: 'tool.arguments_invalid' } });
    expect(failed.content.length).toBeGreaterThan(0);
    expect(failed.content.every((c) => c.type === 'text' && c.text.length > 0)).toBe(true);
    // An unknown tool is the protocol's -32602, not a tool result, and nothing is recorded for it.
    await expect(client.callTool({ name: 'nope.nothing', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    const rows = await json<InvocationList>(await h.call('GET', `/v1/invocations?run_id=${runId}`));
    expect(rows.invocations.map((r) => r.tool_name).sort()).toEqual(['demo.external_write', 'math.evaluate', 'math.evaluate']);
  });

  it("a client that sends only its key acts in the key's default run, at 2026-07-28 and in auto mode, across connections", async () => {
    const recorder = recordingFetch();
    const { client } = await connect({ Authorization: `Bearer ${h.a.plainKey}` }, 'modern', recorder.fetch);
    const listed = await client.listTools();
    expect(listed.tools.map((t) => t.name)).toContain('math.evaluate');
    const first = await client.callTool({ name: 'math.evaluate', arguments: { expression: '1+2' } });
    expect(first.structuredContent).toMatchObject({ status: 'succeeded' });
    const runId = recorder.headers.map((x) => x.get('veetbot-run-id')).find((v) => v !== null) ?? '';
    const sessionId = recorder.headers.map((x) => x.get('veetbot-session-id')).find((v) => v !== null) ?? '';
    const run = await json<Run>(await h.call('GET', `/v1/runs/${runId}`));
    expect(run).toMatchObject({ session_id: sessionId, status: 'running' });
    // A stock client in auto mode, a new connection: the same key's same run.
    const { client: auto } = await connect({ Authorization: `Bearer ${h.a.plainKey}` }, 'auto');
    expect(auto.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    await auto.callTool({ name: 'math.evaluate', arguments: { expression: '2+3' } });
    const rows = await json<InvocationList>(await h.call('GET', `/v1/invocations?run_id=${runId}`));
    expect(rows.invocations).toHaveLength(2);
    // The run ends (cancelled through the API): the next call opens the key's next run and runs there.
    expect((await h.call('POST', `/v1/runs/${runId}/cancel`)).status).toBeLessThan(300);
    const after = await auto.callTool({ name: 'math.evaluate', arguments: { expression: '3+4' } });
    expect(after.structuredContent).toMatchObject({ status: 'succeeded' });
    const invocationId = String(after._meta?.['veetbot/invocation_id']);
    const invocation = await json<{ run_id: string }>(await h.call('GET', `/v1/invocations/${invocationId}`));
    expect(invocation.run_id).not.toBe(runId);
    // The ended default's session was closed by the gateway.
    expect((await json<Session>(await h.call('GET', `/v1/sessions/${sessionId}`))).status).toBe('closed');
  });

  it('a caller states at most user trust in _meta: platform and trusted_configuration are refused, nothing is recorded (docs/adr/0051)', async () => {
    const { runId } = await sessionAndRun(h);
    const { client } = await connect({ Authorization: `Bearer ${h.a.key}`, [RUN_HEADER]: runId }, 'modern');
    for (const claimed of [['platform'], ['user', 'trusted_configuration']]) {
      await expect(
        client.callTool({ name: 'math.evaluate', arguments: { expression: '1+1' }, _meta: { [CONTEXT_TRUST_META]: claimed } }),
      ).rejects.toThrow(/request\.trust_not_allowed/);
    }
    expect((await json<InvocationList>(await h.call('GET', `/v1/invocations?run_id=${runId}`))).invocations).toEqual([]);
    // `user` is a caller's to state, and the row's origin_trust is what it stated.
    const ok = await client.callTool({
      name: 'math.evaluate',
      arguments: { expression: '1+1' },
      _meta: { [CONTEXT_TRUST_META]: ['user'] },
    });
    expect(ok.structuredContent).toMatchObject({ status: 'succeeded' });
    const rows = await json<InvocationList>(await h.call('GET', `/v1/invocations?run_id=${runId}`));
    expect(rows.invocations.map((r) => r.origin_trust)).toEqual(['user']);
  });

  it('a call needing approval returns at once pending; after the decision the repeat is the recorded outcome, run once', async () => {
    const { runId } = await sessionAndRun(h);
    const { client } = await connect({ Authorization: `Bearer ${h.a.plainKey}`, [RUN_HEADER]: runId }, 'modern');
    const call = { name: 'demo.external_write', arguments: { line: 'gateway approved line' }, _meta: { [CALL_ID_META]: 'w-1' } };
    const pending = await client.callTool(call);
    expect(pending.isError).toBe(true);
    expect(pending.structuredContent).toMatchObject({ status: 'waiting_for_approval', call_id: 'w-1' });
    const approvalId = (pending.structuredContent as { approval_id: string }).approval_id;
    expect((await h.outboxLines()).filter((l) => l.includes('gateway approved line'))).toHaveLength(0);
    // The agent's key cannot decide its own approval; the approver's can, through the same API.
    expect((await h.call('POST', `/v1/approvals/${approvalId}/approve`, { key: h.a.plainKey })).status).toBe(403);
    const decided = await json<Approval>(await h.call('POST', `/v1/approvals/${approvalId}/approve`));
    expect(decided.status).toBe('approved');
    const done = await client.callTool(call);
    expect(done.isError).toBe(false);
    expect(done.structuredContent).toMatchObject({ status: 'succeeded', action: 'demo.external_write' });
    expect(await client.callTool(call)).toEqual(done);
    expect((await h.outboxLines()).filter((l) => l.includes('gateway approved line'))).toHaveLength(1);
    // The call id now names that call: other arguments under it are refused, not run.
    const conflict = await client.callTool({ ...call, arguments: { line: 'something else' } });
    expect(conflict.structuredContent).toMatchObject({ status: 'refused', reason_code: 'step.conflict' });
    expect((await h.outboxLines()).filter((l) => l.includes('something else'))).toHaveLength(0);
  });

  it('two tenants are isolated: a run, an MCP session and their tools are invisible to the other key', async () => {
    const { runId } = await sessionAndRun(h);
    // B names A's run: the same answer as a made-up run.
    await expect(connect({ Authorization: `Bearer ${h.b.key}`, [RUN_HEADER]: runId }, 'legacy')).rejects.toThrow();
    const { client: bModern } = await connect({ Authorization: `Bearer ${h.b.key}`, [RUN_HEADER]: runId }, 'modern');
    await expect(bModern.listTools()).rejects.toThrow(/No run of yours/);
    await expect(bModern.callTool({ name: 'math.evaluate', arguments: { expression: '1+1' } })).rejects.toThrow(/No run of yours/);
    expect((await json<InvocationList>(await h.call('GET', `/v1/invocations?run_id=${runId}`))).invocations).toEqual([]);

    // B presents A's Mcp-Session-Id: not found, as any unknown session.
    const { transport } = await connect({ Authorization: `Bearer ${h.a.key}` }, 'legacy');
    const stolen = await fetch(url, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${h.b.key}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': transport.sessionId ?? '',
        'Mcp-Protocol-Version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(stolen.status).toBe(404);
    expect((await stolen.json()) as unknown).toMatchObject({ error: { data: { code: 'mcp.session_not_found' } } });
  });

  it('a missing, bad or revoked key is HTTP 401 with a JSON-RPC error; the SDK client cannot connect', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const post = (key: string | null) =>
      fetch(url, {
        method: 'POST',
        headers: {
          ...(key === null ? {} : { Authorization: `Bearer ${key}` }),
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(init),
      });
    for (const [key, code] of [
      [null, 'auth.missing'],
      ['vbk_not-a-real-key', 'auth.invalid'],
      [h.revokedKey, 'auth.revoked'],
    ] as const) {
      const response = await post(key);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toContain('Bearer');
      expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32001, data: { code } } });
    }
    await expect(connect({ Authorization: 'Bearer vbk_not-a-real-key' }, 'legacy')).rejects.toThrow();
    await expect(connect({ Authorization: 'Bearer vbk_not-a-real-key' }, 'modern')).rejects.toThrow();
  });

  it('DELETE ends the MCP session and closes the veetbot session; the old session id and the run take no more calls', async () => {
    const recorder = recordingFetch();
    const { client, transport } = await connect({ Authorization: `Bearer ${h.a.key}` }, 'legacy', recorder.fetch);
    const sessionId = recorder.headers.map((x) => x.get('veetbot-session-id')).find((v) => v !== null) ?? '';
    const runId = recorder.headers.map((x) => x.get('veetbot-run-id')).find((v) => v !== null) ?? '';
    const mcpSessionId = transport.sessionId ?? '';
    expect((await client.callTool({ name: 'system.time', arguments: {} })).isError).toBe(false);
    await transport.terminateSession();
    expect((await json<Session>(await h.call('GET', `/v1/sessions/${sessionId}`))).status).toBe('closed');
    const after = await fetch(url, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${h.a.key}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': mcpSessionId,
        'Mcp-Protocol-Version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} }),
    });
    expect(after.status).toBe(404);
    // The run of a closed session takes no new call, by name either.
    const { client: named } = await connect({ Authorization: `Bearer ${h.a.key}`, [RUN_HEADER]: runId }, 'modern');
    const refused = await named.callTool({ name: 'system.time', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ status: 'refused', reason_code: 'session.closed' });
  });

  it('DNS-rebinding protection is on by default: a foreign Origin or Host is refused 403 before the key is read', async () => {
    const origin = await fetch(url, {
      method: 'POST',
      headers: { Origin: 'http://evil.example', Authorization: `Bearer ${h.a.key}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(origin.status).toBe(403);
    const port = new URL(url).port;
    const host = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          path: '/mcp',
          method: 'POST',
          headers: { Host: `evil.example:${port}`, 'Content-Type': 'application/json' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
    expect(host).toBe(403);
  });

  it('hostile input is a JSON-RPC error, never a crash', async () => {
    const { runId } = await sessionAndRun(h);
    const headers = {
      Authorization: `Bearer ${h.a.key}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      [RUN_HEADER]: runId,
    };
    for (const body of [
      '{not json',
      '[]',
      '{"jsonrpc":"2.0"}',
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 7 } }),
    ]) {
      const response = await fetch(url, { method: 'POST', headers, body });
      expect(response.status, body).toBeGreaterThanOrEqual(200);
      expect(response.status, body).toBeLessThan(500);
    }
    const { client } = await connect({ Authorization: `Bearer ${h.a.key}`, [RUN_HEADER]: runId }, 'modern');
    await expect(
      client.callTool({ name: 'math.evaluate', arguments: {}, _meta: { [CALL_ID_META]: 'bad id with spaces' } }),
    ).rejects.toThrow(/call_id/);
    await expect(client.callTool({ name: 'math.evaluate', arguments: {}, _meta: { [CONTEXT_TRUST_META]: ['root'] } })).rejects.toThrow(
      /context_trust/,
    );
    // A run id that is not a uuid names nothing.
    const { client: odd } = await connect({ Authorization: `Bearer ${h.a.key}`, [RUN_HEADER]: "x'; drop table runs; --" }, 'modern');
    await expect(odd.listTools()).rejects.toThrow(/No run of yours/);
    // Still serving (ping is a 2025 method: the 2026-07-28 revision has none).
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    expect(h.errors).toEqual([]);
  });
});

describe('the MCP gateway face: cancellation', () => {
  let h: ApiHarness;
  let server: HttpServer;
  let url: string;

  beforeAll(async () => {
    // No worker: the call stays queued, so the client's cancellation lands while it waits.
    h = await openApiHarness({ worker: false });
    ({ server, url } = await listen(h));
  });
  afterAll(async () => {
    await close(server);
    await h.close();
  });

  it('a long call reports progress; notifications/cancelled reaches the pipeline: the run is cancelled, the call never runs', async () => {
    const recorder = recordingFetch();
    const { client } = await connectGatewayClient({
      url,
      headers: { Authorization: `Bearer ${h.a.key}` },
      era: 'legacy',
      fetch: recorder.fetch,
    });
    const runId = recorder.headers.map((x) => x.get('veetbot-run-id')).find((v) => v !== null) ?? '';
    const abort = new AbortController();
    const progress: unknown[] = [];
    const call = client.callTool(
      { name: 'math.evaluate', arguments: { expression: '1+1' } },
      { signal: abort.signal, onprogress: (p) => void progress.push(p) },
    );
    // The call waits on its queued step and says so (notifications/progress); then the client gives up.
    for (let i = 0; i < 600 && progress.length === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(progress.length).toBeGreaterThan(0);
    expect(await h.system.stores.steps.get(h.a.tenantId, runId, 1)).toMatchObject({ status: 'pending' });
    abort.abort();
    await expect(call).rejects.toThrow();
    let run: Run | undefined;
    for (let i = 0; i < 200; i += 1) {
      run = await json<Run>(await h.call('GET', `/v1/runs/${runId}`));
      if (run.status === 'cancelled') break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(run?.status).toBe('cancelled');
    expect((await json<InvocationList>(await h.call('GET', `/v1/invocations?run_id=${runId}`))).invocations).toEqual([]);
    await client.close();
  });
});
