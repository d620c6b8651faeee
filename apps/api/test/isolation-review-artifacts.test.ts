import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FolderWorkspaceProvider } from '@veetbot/blob-store-folder';
import type { Invocation, InvocationList, McpServer, OperatorMcpServerList, Review, StepOutcome, StreamEvent } from '@veetbot/client';
import { DefaultEgressPolicy } from '@veetbot/mcp-adapter';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app';
import { errorOf, openApiHarness, sessionAndRun, type ApiHarness } from './harness';

let h: ApiHarness;
/** Tenant A's scene: a run with a truncated result (an artifact), a pending approval, an UNCERTAIN row. */
let scene: {
  sessionId: string;
  runId: string;
  artifactId: string;
  approvalId: string;
  invocationId: string;
  uncertainId: string;
  fileText: string;
};

beforeAll(async () => {
  h = await openApiHarness();
  const { sessionId, runId } = await sessionAndRun(h);
  // A file bigger than output.inline_maximum_bytes in the run's real workspace folder.
  const folder = new FolderWorkspaceProvider({
    root: join(h.dataDir, 'workspaces'),
    open: () => {
      throw new Error('only the folder name is used here');
    },
  }).folderOf(h.a.tenantId, runId);
  await mkdir(folder, { recursive: true });
  const fileText = Array.from({ length: 400 }, (_, i) => `line ${i}: the quick brown fox`).join('\n');
  await writeFile(join(folder, 'big.txt'), fileText);
  const response = await h.call('POST', `/v1/runs/${runId}/steps`, {
    body: {
      step_number: 1,
      calls: [
        { call_id: 'read', tool_name: 'workspace.read_text', arguments: { path: 'big.txt' }, context_trust: ['user'] },
        { call_id: 'send', tool_name: 'demo.external_write', arguments: { line: 'needs approval' }, context_trust: ['external_untrusted'] },
      ],
      wait_seconds: 20,
    },
  });
  const outcome = (await response.json()) as StepOutcome;
  if (outcome.status !== 'waiting_for_approval') throw new Error(`unexpected outcome ${JSON.stringify(outcome)}`);
  const read = outcome.items[0]!;
  if (!read.truncated || read.artifact_id === null) throw new Error(`expected an artifact: ${JSON.stringify(read)}`);

  // An UNCERTAIN row, made the way the recovery table makes one (claimed, then concluded unknown).
  const stores = h.system.stores;
  const invocationId = outcome.pending_approvals[0]!.invocation_id;
  const now = new Date();
  const acquired = await stores.runs.acquireLease(h.a.tenantId, runId, 'test-worker', 60_000, now);
  if (acquired === null) throw new Error('lease');
  const fence = { runId, fencingToken: acquired.fencingToken };
  const uncertainId = crypto.randomUUID();
  await stores.invocations.insertIntent(
    h.a.tenantId,
    {
      id: uncertainId,
      runId,
      sessionId,
      stepNumber: 2,
      callId: 'u1',
      toolName: 'demo.external_write',
      toolVersion: '1.0.0',
      status: 'authorized',
      idempotencyKey: `test-key-${uncertainId}`,
      argumentsHash: 'a'.repeat(64),
      arguments: { line: 'maybe sent' },
      toolSource: 'builtin',
      serverId: null,
      idempotencyClass: 'non_idempotent',
      originTrust: 'user',
      parallelGroup: null,
      createdAt: now,
    },
    [],
  );
  await stores.invocations.claim(h.a.tenantId, uncertainId, fence, now, []);
  await stores.invocations.complete(
    h.a.tenantId,
    uncertainId,
    fence,
    {
      status: 'uncertain',
      outcomeStatus: 'uncertain',
      reasonCode: 'tool.outcome_unknown',
      result: null,
      error: null,
      outputBytes: null,
      truncated: false,
      artifactId: null,
      finishedAt: now,
    },
    [],
  );
  await stores.runs.releaseLease(h.a.tenantId, fence);
  scene = {
    sessionId,
    runId,
    artifactId: read.artifact_id,
    approvalId: outcome.pending_approvals[0]!.approval_id!,
    invocationId,
    uncertainId,
    fileText,
  };
}, 120_000);

afterAll(async () => {
  await h?.close();
});

describe('tenant isolation', () => {
  it("tenant B gets exactly the missing-id 404 for every one of A's resources", async () => {
    const b = h.b.key;
    const missing = (await errorOf(await h.call('GET', `/v1/sessions/${crypto.randomUUID()}`, { key: b }))).body;
    const requests: [string, string, unknown?][] = [
      ['GET', `/v1/sessions/${scene.sessionId}`],
      ['POST', `/v1/sessions/${scene.sessionId}/close`],
      ['GET', `/v1/runs/${scene.runId}`],
      ['POST', `/v1/runs/${scene.runId}/cancel`],
      ['GET', `/v1/runs/${scene.runId}/steps/1`],
      [
        'POST',
        `/v1/runs/${scene.runId}/steps`,
        {
          step_number: 9,
          calls: [{ call_id: 'x', tool_name: 'math.evaluate', arguments: { expression: '1' }, context_trust: ['user'] }],
          wait_seconds: 0,
        },
      ],
      ['GET', `/v1/invocations/${scene.invocationId}`],
      ['GET', `/v1/artifacts/${scene.artifactId}`],
      ['POST', `/v1/approvals/${scene.approvalId}/approve`],
      ['POST', `/v1/approvals/${scene.approvalId}/deny`],
      ['POST', `/v1/review/uncertain/${scene.uncertainId}/resolve`, { resolution: 'failed', note: 'mine now' }],
      ['GET', `/v1/events?run_id=${scene.runId}`],
      ['POST', '/v1/runs', { session_id: scene.sessionId, deadline_seconds: 60 }],
    ];
    for (const [method, path, body] of requests) {
      const response = await h.call(method, path, { key: b, ...(body === undefined ? {} : { body }) });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(await response.json(), `${method} ${path}`).toEqual(missing);
    }
    // Lists are scoped: B sees none of A's rows.
    expect(
      ((await (await h.call('GET', `/v1/invocations?run_id=${scene.runId}`, { key: b })).json()) as InvocationList).invocations,
    ).toEqual([]);
    expect(((await (await h.call('GET', '/v1/approvals', { key: b })).json()) as { approvals: unknown[] }).approvals).toEqual([]);
    expect(((await (await h.call('GET', '/v1/review/uncertain', { key: b })).json()) as InvocationList).invocations).toEqual([]);
    // ...and nothing of A's changed.
    const approval = await h.call('GET', '/v1/approvals');
    expect(
      ((await approval.json()) as { approvals: { id: string; status: string }[] }).approvals.find((a) => a.id === scene.approvalId)?.status,
    ).toBe('pending');
    expect(((await (await h.call('GET', `/v1/runs/${scene.runId}`)).json()) as { status: string }).status).toBe('running');
  });
});

describe('artifacts', () => {
  it("serves the owner the truncated result's whole capture with its media type and trust", async () => {
    const response = await h.call('GET', `/v1/artifacts/${scene.artifactId}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(response.headers.get('x-veetbot-artifact-trust')).toBe('internal_tool');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const text = await response.text();
    expect(text).toContain('line 399: the quick brown fox');
    expect(await errorOf(await h.call('GET', `/v1/artifacts/${crypto.randomUUID()}`))).toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('the UNCERTAIN review queue', () => {
  it('lists the row, resolves it once with who and when (audited), and the row stays UNCERTAIN', async () => {
    const queue = (await (await h.call('GET', '/v1/review/uncertain')).json()) as InvocationList;
    expect(queue.invocations.map((i) => i.id)).toEqual([scene.uncertainId]);
    // docs/adr/0063: the queue shows what the sweep's reconciler tried (nothing yet, then an unknown).
    expect(queue.invocations[0]!.reconciliation).toBeNull();
    await h.system.stores.reconciliations.recordAttempt(h.a.tenantId, {
      invocationId: scene.uncertainId,
      reconciler: 'demo.external_write',
      attempts: 1,
      nextAttemptAt: null,
      lastOutcome: 'unknown',
      lastEvidence: 'The outbox does not exist; nothing to look in.',
      at: new Date('2026-12-01T00:00:00.000Z'),
    });
    const tried = (await (await h.call('GET', '/v1/review/uncertain')).json()) as InvocationList;
    expect(tried.invocations[0]!.reconciliation).toEqual({
      reconciler: 'demo.external_write',
      attempts: 1,
      last_outcome: 'unknown',
      last_evidence: 'The outbox does not exist; nothing to look in.',
      next_attempt_at: null,
      updated_at: '2026-12-01T00:00:00.000Z',
    });
    expect(
      await errorOf(
        await h.call('POST', `/v1/review/uncertain/${scene.invocationId}/resolve`, { body: { resolution: 'failed', note: 'n' } }),
      ),
    ).toMatchObject({
      status: 409,
      code: 'review.not_uncertain',
    });

    const resolved = await h.call('POST', `/v1/review/uncertain/${scene.uncertainId}/resolve`, {
      body: { resolution: 'succeeded', note: 'The line is in the outbox.' },
    });
    expect(resolved.status).toBe(201);
    const review = (await resolved.json()) as Review;
    expect(review).toMatchObject({
      invocation_id: scene.uncertainId,
      resolution: 'succeeded',
      note: 'The line is in the outbox.',
      reviewed_by: 'tenant-a-admin',
    });

    const row = (await (await h.call('GET', `/v1/invocations/${scene.uncertainId}`)).json()) as Invocation;
    expect(row.status).toBe('uncertain');
    expect(row.review).toEqual(review);
    expect(((await (await h.call('GET', '/v1/review/uncertain')).json()) as InvocationList).invocations).toEqual([]);
    expect(
      await errorOf(
        await h.call('POST', `/v1/review/uncertain/${scene.uncertainId}/resolve`, { body: { resolution: 'failed', note: 'again' } }),
      ),
    ).toMatchObject({
      status: 409,
      code: 'review.already_resolved',
    });

    const events = await h.system.stores.events.listAfter(h.a.tenantId, scene.runId, 0, 1000);
    const audit = events.filter((e) => e.type === 'review.uncertain.resolved');
    expect(audit).toHaveLength(1);
    expect(audit[0]!.payload).toMatchObject({ invocation_id: scene.uncertainId, resolution: 'succeeded', reviewed_by: 'tenant-a-admin' });
    // The note stays in the row: events carry identity and classification only.
    expect(JSON.stringify(audit[0]!.payload)).not.toContain('outbox');
  });
});

/** Read SSE messages from a live response until `count` events arrived. */
async function readEvents(
  response: Response,
  count: number,
): Promise<{ events: { id: string; event: string; data: StreamEvent }[]; raw: string }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let raw = '';
  const events: { id: string; event: string; data: StreamEvent }[] = [];
  const deadline = Date.now() + 10_000;
  while (events.length < count && Date.now() < deadline) {
    const { done, value } = await reader.read();
    if (done) break;
    raw += decoder.decode(value, { stream: true });
    const blocks = raw.split('\n\n');
    events.length = 0;
    for (const block of blocks.slice(0, -1)) {
      const fields = Object.fromEntries(
        block
          .split('\n')
          .filter((l) => !l.startsWith(':') && l.includes(': '))
          .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]),
      );
      if (fields.data !== undefined) events.push({ id: fields.id!, event: fields.event!, data: JSON.parse(fields.data) as StreamEvent });
    }
  }
  await reader.cancel();
  return { events, raw };
}

describe('events (SSE)', () => {
  it("replays the run's events from the table, then resumes after Last-Event-ID", async () => {
    const stored = await h.system.stores.events.listAfter(h.a.tenantId, scene.runId, 0, 1000);
    expect(stored.length).toBeGreaterThan(3);
    const response = await h.call('GET', `/v1/events?run_id=${scene.runId}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const first = await readEvents(response, stored.length);
    expect(first.events.map((e) => Number(e.id))).toEqual(stored.map((e) => e.sequence));
    expect(first.events.map((e) => e.event)).toEqual(stored.map((e) => e.type));
    expect(first.events[0]!.data).toMatchObject({ run_id: scene.runId, sequence: stored[0]!.sequence, type: stored[0]!.type });
    // No arguments or results on the stream (§ Events and telemetry).
    expect(first.raw).not.toContain('quick brown fox');

    const resume = await h.call('GET', `/v1/events?run_id=${scene.runId}`, { headers: { 'Last-Event-ID': String(stored[1]!.sequence) } });
    const rest = await readEvents(resume, stored.length - 2);
    expect(rest.events.map((e) => Number(e.id))).toEqual(stored.slice(2).map((e) => e.sequence));
  });

  it('goes live: an event appended after the replay arrives on the open stream', async () => {
    const stored = await h.system.stores.events.listAfter(h.a.tenantId, scene.runId, 0, 1000);
    const last = stored.at(-1)!.sequence;
    const response = await h.call('GET', `/v1/events?run_id=${scene.runId}&last_event_id=${last}`);
    const reading = readEvents(response, 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await h.system.stores.events.append(h.a.tenantId, [
      {
        runId: scene.runId,
        type: 'test.live',
        payload: { n: 1 },
        derivationKey: `test.live:${crypto.randomUUID()}`,
        createdAt: new Date(),
      },
    ]);
    const { events } = await reading;
    expect(events.map((e) => e.event)).toEqual(['test.live']);
    expect(Number(events[0]!.id)).toBe(last + 1);
  });

  it('sends heartbeat comments while nothing happens', async () => {
    const quiet = buildApp({ ...h.system.deps, settings: { eventPollMs: 10, heartbeatMs: 30 } });
    const response = await quiet.app.request('http://api.test/v1/events', { headers: { Authorization: `Bearer ${h.b.key}` } });
    const reader = response.body!.getReader();
    let raw = '';
    const deadline = Date.now() + 5000;
    while (!raw.includes(': heartbeat') && Date.now() < deadline) raw += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(raw).toContain(': heartbeat');
  });
});

describe('tenant MCP servers', () => {
  const server = {
    server_id: 'acme',
    transport: 'http',
    endpoint: 'https://mcp.acme.example/mcp',
    auth_scheme: 'bearer',
    credential_ref: 'secret:ACME_TOKEN',
    required_scopes: ['mcp.acme.use'],
  };

  it('creates, lists, updates and disables an HTTP server, validated at write', async () => {
    expect((await h.call('PUT', '/v1/secrets/ACME_TOKEN', { body: { value: 'acme-token-value' } })).status).toBe(201);
    const created = await h.call('POST', '/v1/mcp/servers', { body: server });
    expect(created.status).toBe(201);
    expect((await created.json()) as McpServer).toMatchObject({
      server_id: 'acme',
      transport: 'http',
      auth_scheme: 'bearer',
      enabled: true,
      side_effect: 'external_write',
      risk: 'high',
    });
    expect(await errorOf(await h.call('POST', '/v1/mcp/servers', { body: server }))).toMatchObject({
      status: 409,
      code: 'mcp.server_id_taken',
    });

    const patched = (await (
      await h.call('PATCH', '/v1/mcp/servers/acme', { body: { timeout_seconds: 10, side_effect: 'external_read', risk: 'low' } })
    ).json()) as McpServer;
    expect(patched).toMatchObject({ timeout_seconds: 10, side_effect: 'external_read', risk: 'low', credential_ref: 'secret:ACME_TOKEN' });
    // The merged configuration is validated as a whole: bearer without its reference is refused.
    expect(await errorOf(await h.call('PATCH', '/v1/mcp/servers/acme', { body: { credential_ref: null } }))).toMatchObject({
      status: 400,
      code: 'mcp.config.credential_ref_required',
    });
    expect(await errorOf(await h.call('PATCH', '/v1/mcp/servers/acme', { body: { server_id: 'other' } }))).toMatchObject({
      status: 400,
      code: 'request.invalid',
    });

    const disabled = (await (await h.call('POST', '/v1/mcp/servers/acme/disable')).json()) as McpServer;
    expect(disabled.enabled).toBe(false);
    const list = (await (await h.call('GET', '/v1/mcp/servers')).json()) as { servers: McpServer[] };
    expect(list.servers.map((s) => [s.server_id, s.enabled])).toEqual([['acme', false]]);
    expect(((await (await h.call('GET', '/v1/mcp/servers', { key: h.b.key })).json()) as { servers: unknown[] }).servers).toEqual([]);
    expect((await h.call('GET', '/v1/mcp/servers/acme', { key: h.b.key })).status).toBe(404);
  });

  it('refuses stdio from a tenant, a URL the egress policy refuses, and bad pairings, each with its mcp.config code', async () => {
    const stdio = await errorOf(
      await h.call('POST', '/v1/mcp/servers', {
        body: { server_id: 'shell', transport: 'stdio', endpoint: '/bin/sh -c id', auth_scheme: 'none' },
      }),
    );
    expect(stdio).toMatchObject({ status: 400, code: 'mcp.config.stdio_operator_only' });
    const loopback = await errorOf(
      await h.call('POST', '/v1/mcp/servers', {
        body: { server_id: 'local', transport: 'http', endpoint: 'https://127.0.0.1/mcp', auth_scheme: 'none' },
      }),
    );
    expect(loopback).toMatchObject({ status: 400, code: 'mcp.config.endpoint_refused' });
    const pairing = await errorOf(
      await h.call('POST', '/v1/mcp/servers', {
        body: { server_id: 'x1', transport: 'http', endpoint: 'https://x.example/mcp', auth_scheme: 'none', credential_ref: 'env:X' },
      }),
    );
    expect(pairing).toMatchObject({ status: 400, code: 'mcp.config.credential_ref_forbidden' });
    expect(pairing.message).toContain('body.credential_ref');
  });

  it('lists operator servers read-only, without credential references', async () => {
    const withOperator = buildApp({
      ...h.system.deps,
      operatorServers: [
        {
          serverId: 'everything',
          transport: 'stdio',
          endpoint: '/usr/bin/node',
          args: ['/opt/everything/dist/index.js', 'stdio'],
          authScheme: 'env',
          authName: 'EVERYTHING_TOKEN',
          credentialRef: 'file:/etc/veetbot/everything-token',
          tokenEndpoint: null,
          tokenScopes: null,
          sideEffect: 'none',
          risk: 'low',
          idempotency: 'read_only',
          requiredScopes: [],
          timeoutSeconds: 30,
          maximumOutputBytes: 1024,
          enabled: true,
        },
      ],
      egress: new DefaultEgressPolicy({}),
    });
    const response = await withOperator.app.request('http://api.test/v1/mcp/operator-servers', {
      headers: { Authorization: `Bearer ${h.a.key}` },
    });
    const body = (await response.json()) as OperatorMcpServerList;
    expect(body.servers).toEqual([
      expect.objectContaining({ server_id: 'everything', transport: 'stdio', args: ['/opt/everything/dist/index.js', 'stdio'] }),
    ]);
    expect(JSON.stringify(body)).not.toContain('everything-token');
    expect(JSON.stringify(body)).not.toContain('credential');
    // Not writable: there is no route that writes them, and a tenant cannot shadow one.
    const shadow = await withOperator.app.request('http://api.test/v1/mcp/servers', {
      method: 'POST',
      headers: { Authorization: `Bearer ${h.a.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ server_id: 'everything', transport: 'http', endpoint: 'https://e.example/mcp', auth_scheme: 'none' }),
    });
    expect(await errorOf(shadow)).toMatchObject({ status: 409, code: 'mcp.server_id_taken' });
    expect(
      (
        await withOperator.app.request('http://api.test/v1/mcp/operator-servers', {
          method: 'POST',
          headers: { Authorization: `Bearer ${h.a.key}` },
        })
      ).status,
    ).toBe(404);
  });
});
