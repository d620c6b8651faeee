import { ApiError, VeetbotClient, type StreamEvent } from '@veetbot/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiHarness, type ApiHarness } from './harness';

// @veetbot/client against the real app in process: the client's own package may not import an
// app (tooling/boundaries), so the end-to-end half of its tests lives here; its unit tests
// (SSE parsing, error decoding, query strings) are in packages/client/test.

let h: ApiHarness;
let client: VeetbotClient;
beforeAll(async () => {
  h = await openApiHarness();
  client = new VeetbotClient({ baseUrl: 'http://api.test', apiKey: h.a.key, fetch: (input, init) => h.api.app.request(input, init) });
}, 120_000);
afterAll(async () => {
  await h?.close();
});

describe('VeetbotClient over the in-process app', () => {
  it('drives a session, a run, a step, an approval, invocations and events through every typed call', async () => {
    const session = await client.openSession({ agent_id: 'client-test', enabled_tools: ['math.*', 'demo.*'] });
    expect(session.tools.map((t) => t.name).sort()).toEqual(['demo.external_write', 'math.evaluate']);
    expect((await client.getSession(session.id)).tool_schema_sha256).toBe(session.tool_schema_sha256);
    const run = await client.createRun({ session_id: session.id, deadline_seconds: 300, budgets: { maximum_tool_calls: 10 } });
    expect(run).toMatchObject({ status: 'running', budgets: { maximum_tool_calls: 10 } });
    expect((await client.getRun(run.id)).id).toBe(run.id);

    const submitted = await client.submitStep(run.id, {
      step_number: 1,
      calls: [
        { call_id: 'm', tool_name: 'math.evaluate', arguments: { expression: '3*3' }, context_trust: ['user'] },
        { call_id: 'w', tool_name: 'demo.external_write', arguments: { line: 'from the client' }, context_trust: ['external_untrusted'] },
      ],
      wait_seconds: 20,
    });
    expect(submitted.status).toBe(200);
    expect(submitted.outcome.status).toBe('waiting_for_approval');
    const approvalId = submitted.outcome.pending_approvals[0]!.approval_id!;
    expect((await client.listApprovals()).approvals.map((a) => a.id)).toContain(approvalId);
    expect((await client.approve(approvalId)).status).toBe('approved');

    const settled = await client.submitStepAndWait(run.id, {
      step_number: 1,
      calls: [
        { call_id: 'm', tool_name: 'math.evaluate', arguments: { expression: '3*3' }, context_trust: ['user'] },
        { call_id: 'w', tool_name: 'demo.external_write', arguments: { line: 'from the client' }, context_trust: ['external_untrusted'] },
      ],
      wait_seconds: 5,
    });
    expect(settled.items.map((i) => [i.call_id, i.outcome.status])).toEqual([
      ['m', 'succeeded'],
      ['w', 'succeeded'],
    ]);
    expect(await client.getStep(run.id, 1)).toEqual(settled);

    const page = await client.listInvocations({ run_id: run.id, limit: 1 });
    expect(page.invocations).toHaveLength(1);
    expect(page.next_cursor).not.toBeNull();
    const rest = await client.listInvocations({ run_id: run.id, cursor: page.next_cursor!, limit: 10 });
    expect([...page.invocations, ...rest.invocations].map((i) => i.call_id).sort()).toEqual(['m', 'w']);
    expect((await client.getInvocation(page.invocations[0]!.id)).run_id).toBe(run.id);
    expect((await client.listUncertain()).invocations).toEqual([]);

    // Events: the async iterator replays the run's stream; aborting ends it.
    const controller = new AbortController();
    const seen: StreamEvent[] = [];
    for await (const event of client.events({ runId: run.id, signal: controller.signal })) {
      seen.push(event);
      if (event.type === 'approval.decided') controller.abort();
    }
    expect(seen.map((e) => e.sequence)).toEqual(seen.map((_, i) => i + 1));
    expect(seen.map((e) => e.type)).toContain('tool.call.completed');
    const resumed: StreamEvent[] = [];
    const second = new AbortController();
    for await (const event of client.events({ runId: run.id, lastEventId: seen.length - 1, signal: second.signal })) {
      resumed.push(event);
      second.abort();
    }
    expect(resumed[0]!.sequence).toBe(seen.length);

    expect((await client.cancelRun(run.id)).status).toBe('cancelled');
    expect((await client.closeSession(session.id)).status).toBe('closed');
  });

  it('reads an artifact and manages MCP servers', async () => {
    const server = await client.createMcpServer({
      server_id: 'docs',
      transport: 'http',
      endpoint: 'https://docs.example/mcp',
      auth_scheme: 'none',
    });
    expect(server.enabled).toBe(true);
    expect((await client.updateMcpServer('docs', { timeout_seconds: 5 })).timeout_seconds).toBe(5);
    expect((await client.getMcpServer('docs')).server_id).toBe('docs');
    expect((await client.disableMcpServer('docs')).enabled).toBe(false);
    expect((await client.listMcpServers()).servers.map((s) => s.server_id)).toEqual(['docs']);
    expect((await client.listOperatorMcpServers()).servers).toEqual([]);

    const { createArtifactWriterFactory } = await import('@veetbot/blob-store-folder');
    const session = await client.openSession({ agent_id: 'a' });
    const run = await client.createRun({ session_id: session.id, deadline_seconds: 60 });
    const writer = createArtifactWriterFactory({
      blobs: h.system.deps.blobs,
      artifacts: h.system.stores.artifacts,
      clock: h.system.deps.clock,
    }).forScope({ tenantId: h.a.tenantId, runId: run.id, invocationId: null });
    const ref = await writer.write({
      bytes: new TextEncoder().encode('{"rows":[1,2,3]}'),
      mediaType: 'application/json',
      trust: 'external_untrusted',
    });
    const artifact = await client.getArtifact(ref.artifact_id);
    expect(new TextDecoder().decode(artifact.bytes)).toBe('{"rows":[1,2,3]}');
    expect(artifact).toMatchObject({ mediaType: 'application/json', trust: 'external_untrusted', sha256: ref.sha256 });
  });

  it('turns every error into a typed ApiError with the stable code', async () => {
    const anonymous = new VeetbotClient({ baseUrl: 'http://api.test/', fetch: (input, init) => h.api.app.request(input, init) });
    await expect(anonymous.listMcpServers()).rejects.toMatchObject({ name: 'ApiError', status: 401, code: 'auth.missing' });
    await expect(client.getRun(crypto.randomUUID())).rejects.toSatisfy(
      (e: unknown) => e instanceof ApiError && e.status === 404 && e.code === 'not_found',
    );
    await expect(client.createRun({ session_id: crypto.randomUUID(), deadline_seconds: 0 })).rejects.toMatchObject({
      status: 400,
      code: 'request.invalid',
    });
    const reader = new VeetbotClient({
      baseUrl: 'http://api.test',
      apiKey: h.a.plainKey,
      fetch: (input, init) => h.api.app.request(input, init),
    });
    await expect(reader.approve(crypto.randomUUID())).rejects.toMatchObject({ status: 403, code: 'auth.scope_missing' });

    expect(await anonymous.health()).toEqual({ status: 'ok' });
    expect((await anonymous.ready()).status).toBe('ready');
    // The composed PrometheusToolMetrics saw the calls the worker ran in the first test.
    expect(await anonymous.metrics()).toMatch(
      /^tool_calls_total\{name="math\.evaluate",source="builtin",outcome_status="succeeded"\} [1-9]/m,
    );
    expect((await anonymous.openApi()).openapi).toBe('3.1.0');
  });
});
