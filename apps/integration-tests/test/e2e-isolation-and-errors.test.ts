import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { ApiError, VeetbotClient } from '@veetbot/client';
import { createStores, openDatabase, type Database } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScene, type E2eScene } from '../src/e2e-processes';

/**
 * Over HTTP against the real api and worker processes on PostgreSQL: a second tenant sees none
 * of the demo tenant's objects (the exact missing-id 404), and bad requests each get their
 * stable error code. The second tenant and its keys are provisioned the way the api does it
 * (stores directly; the key stored as its sha256).
 */
let scene: E2eScene;
let database: Database;
let a: VeetbotClient;
let otherKey = '';
let revokedKey = '';
/** The demo tenant's objects. */
let own: { sessionId: string; runId: string; invocationId: string; artifactId: string; approvalId: string };

const sha256 = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');
const newKey = () => `vbk_${randomBytes(24).toString('base64url')}`;

beforeAll(async () => {
  scene = await startScene({ workers: 1 });
  database = await openDatabase({ url: scene.url, poolSize: 2 });
  const stores = createStores(database);
  const now = new Date();
  await stores.tenants.create({ id: 'tenant-b', name: 'Tenant B', createdAt: now });
  const scopes = ['approvals.decide', 'review.resolve', 'workspace.read', 'workspace.write', 'demo.write'];
  otherKey = newKey();
  await stores.apiKeys.create('tenant-b', {
    keyHash: sha256(otherKey),
    prefix: otherKey.slice(0, 12),
    principalId: 'b-admin',
    scopes,
    createdAt: now,
  });
  revokedKey = newKey();
  const revoked = await stores.apiKeys.create('tenant-b', {
    keyHash: sha256(revokedKey),
    prefix: revokedKey.slice(0, 12),
    principalId: 'b-old',
    scopes,
    createdAt: now,
  });
  await stores.apiKeys.revoke('tenant-b', revoked.id, now);

  // The demo tenant's scene: a truncated read (an artifact) and a pending approval.
  a = new VeetbotClient({ baseUrl: scene.baseUrl, apiKey: scene.demoKey });
  const session = await a.openSession({ agent_id: 'tenant-a-agent' });
  const run = await a.createRun({ session_id: session.id, deadline_seconds: 600 });
  const big = 'x'.repeat(10_000);
  await a.submitStepAndWait(run.id, {
    step_number: 1,
    calls: [{ call_id: 'w', tool_name: 'workspace.write_text', arguments: { path: 'big.txt', text: big }, context_trust: ['user'] }],
  });
  const outcome = await a.submitStepAndWait(run.id, {
    step_number: 2,
    calls: [
      { call_id: 'r', tool_name: 'workspace.read_text', arguments: { path: 'big.txt' }, context_trust: ['user'] },
      { call_id: 's', tool_name: 'demo.external_write', arguments: { line: 'tenant a only' }, context_trust: ['external_untrusted'] },
    ],
    wait_seconds: 20,
  });
  const read = outcome.items.find((i) => i.call_id === 'r');
  if (outcome.status !== 'waiting_for_approval' || read?.artifact_id == null)
    throw new Error(`unexpected scene: ${JSON.stringify(outcome)}`);
  const invocations = await a.listInvocations({ run_id: run.id });
  own = {
    sessionId: session.id,
    runId: run.id,
    invocationId: invocations.invocations[0]!.id,
    artifactId: read.artifact_id,
    approvalId: outcome.pending_approvals[0]!.approval_id!,
  };
}, 180_000);

afterAll(async () => {
  await database?.close();
  await scene?.close();
});

/** Status and body of a raw request. */
async function raw(
  path: string,
  init: RequestInit & { key?: string | null } = {},
): Promise<{ status: number; body: unknown; text: string }> {
  const headers = new Headers(init.headers);
  if (init.key !== null) headers.set('Authorization', `Bearer ${init.key ?? scene.demoKey}`);
  const response = await fetch(`${scene.baseUrl}${path}`, { ...init, headers });
  const text = await response.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  return { status: response.status, body, text };
}

describe('tenant isolation over HTTP', () => {
  it("another tenant's session, run, step, invocation, artifact, approval and events are the missing-id 404", async () => {
    const missing = await raw(`/v1/sessions/${randomUUID()}`, { key: otherKey });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: { code: 'not_found' } });
    const probes: Array<[string, string, 'GET' | 'POST']> = [
      ['session', `/v1/sessions/${own.sessionId}`, 'GET'],
      ['session close', `/v1/sessions/${own.sessionId}/close`, 'POST'],
      ['run', `/v1/runs/${own.runId}`, 'GET'],
      ['run cancel', `/v1/runs/${own.runId}/cancel`, 'POST'],
      ['step', `/v1/runs/${own.runId}/steps/2`, 'GET'],
      ['invocation', `/v1/invocations/${own.invocationId}`, 'GET'],
      ['artifact', `/v1/artifacts/${own.artifactId}`, 'GET'],
      ['approval', `/v1/approvals/${own.approvalId}/approve`, 'POST'],
      ['events', `/v1/events?run_id=${own.runId}`, 'GET'],
    ];
    for (const [what, path, method] of probes) {
      const answer = await raw(path, { method, key: otherKey });
      expect([what, answer.status, answer.text]).toEqual([what, 404, missing.text]);
    }
    // Lists are scoped too: none of A's rows appear for B.
    const b = new VeetbotClient({ baseUrl: scene.baseUrl, apiKey: otherKey });
    expect((await b.listApprovals({ status: 'pending' })).approvals).toEqual([]);
    expect((await b.listInvocations({})).invocations).toEqual([]);
    // And A still sees all of it: the 404s above were isolation, not absence.
    expect((await a.getRun(own.runId)).id).toBe(own.runId);
    expect((await a.getArtifact(own.artifactId)).bytes.byteLength).toBeGreaterThan(4_096);
    expect((await a.listApprovals({ status: 'pending' })).approvals.map((x) => x.id)).toContain(own.approvalId);
    const stillPending = await a.approve(own.approvalId);
    expect(stillPending.status).toBe('approved');
  });
});

describe('bad requests over HTTP', () => {
  const json = { 'Content-Type': 'application/json' };
  const codeOf = (answer: { body: unknown }) => (answer.body as { error?: { code?: string } } | null)?.error?.code;

  it('malformed JSON, wrong types and unknown fields are 400 with their codes; the message names the path, never the value', async () => {
    const malformed = await raw('/v1/sessions', { method: 'POST', headers: json, body: '{"agent_id": "x",' });
    expect([malformed.status, codeOf(malformed)]).toEqual([400, 'request.invalid_json']);

    const wrongType = await raw('/v1/runs', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ session_id: own.sessionId, deadline_seconds: 'soon-secret-value' }),
    });
    expect([wrongType.status, codeOf(wrongType)]).toEqual([400, 'request.invalid']);
    expect(wrongType.text).toContain('deadline_seconds');
    expect(wrongType.text).not.toContain('soon-secret-value');

    const unknown = await raw('/v1/sessions', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ agent_id: 'x', favourite_colour: 'blue' }),
    });
    expect([unknown.status, codeOf(unknown)]).toEqual([400, 'request.invalid']);
    const nested = await raw(`/v1/runs/${own.runId}/steps`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        step_number: 9,
        calls: [{ call_id: 'c', tool_name: 'math.evaluate', arguments: { expression: '1' }, context_trust: ['user'], extra: true }],
      }),
    });
    expect([nested.status, codeOf(nested)]).toEqual([400, 'request.invalid']);
  });

  it('a 10 MB body is 413 request.too_large', async () => {
    const body = JSON.stringify({ agent_id: 'x'.repeat(10 * 1024 * 1024) });
    const answer = await raw('/v1/sessions', { method: 'POST', headers: json, body });
    expect([answer.status, codeOf(answer)]).toEqual([413, 'request.too_large']);
  });

  it('missing auth, an unknown key and a revoked key are 401 with their codes', async () => {
    const missing = await raw('/v1/runs', { method: 'POST', headers: json, body: '{}', key: null });
    expect([missing.status, codeOf(missing)]).toEqual([401, 'auth.missing']);
    const unknown = await raw(`/v1/sessions/${own.sessionId}`, { key: newKey() });
    expect([unknown.status, codeOf(unknown)]).toEqual([401, 'auth.invalid']);
    const revoked = await raw(`/v1/sessions/${own.sessionId}`, { key: revokedKey });
    expect([revoked.status, codeOf(revoked)]).toEqual([401, 'auth.revoked']);
    // The client surfaces the same code as a typed ApiError.
    const client = new VeetbotClient({ baseUrl: scene.baseUrl, apiKey: revokedKey });
    await expect(client.listApprovals()).rejects.toMatchObject({ constructor: ApiError, status: 401, code: 'auth.revoked' });
  });
});
