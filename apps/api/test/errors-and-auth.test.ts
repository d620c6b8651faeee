import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app';
import { errorOf, openApiHarness, sessionAndRun, type ApiHarness } from './harness';

let h: ApiHarness;
beforeAll(async () => {
  h = await openApiHarness({ worker: false });
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const ERROR_KEYS = ['code', 'message'];

describe('authentication', () => {
  it('refuses a missing, malformed, unknown or revoked key with its own code, and names no tenant', async () => {
    const cases: [string | null, Record<string, string> | undefined, string][] = [
      [null, undefined, 'auth.missing'],
      [null, { Authorization: '' }, 'auth.missing'],
      [null, { Authorization: 'Basic dXNlcjpwYXNz' }, 'auth.invalid'],
      ['not-a-key', undefined, 'auth.invalid'],
      [`vbk_${'x'.repeat(32)}`, undefined, 'auth.invalid'],
      [h.revokedKey, undefined, 'auth.revoked'],
    ];
    for (const [key, headers, code] of cases) {
      const response = await h.call('GET', '/v1/mcp/servers', { key, ...(headers === undefined ? {} : { headers }) });
      const error = await errorOf(response);
      expect(error.status, code).toBe(401);
      expect(error.code).toBe(code);
      expect(response.headers.get('www-authenticate')).toContain('Bearer');
      expect(Object.keys((error.body as { error: object }).error)).toEqual(ERROR_KEYS);
      expect(error.message).not.toContain('tenant-a');
    }
  });

  it('accepts a valid key, and the probes need none', async () => {
    expect((await h.call('GET', '/v1/mcp/servers')).status).toBe(200);
    for (const path of ['/healthz', '/readyz', '/metrics', '/v1/openapi.json'])
      expect((await h.call('GET', path, { key: null })).status, path).toBe(200);
  });

  it('refuses a decision without its scope: 403 auth.scope_missing', async () => {
    const approve = await errorOf(await h.call('POST', `/v1/approvals/${crypto.randomUUID()}/approve`, { key: h.a.plainKey }));
    expect(approve).toMatchObject({ status: 403, code: 'auth.scope_missing' });
    const resolve = await errorOf(
      await h.call('POST', `/v1/review/uncertain/${crypto.randomUUID()}/resolve`, {
        key: h.a.plainKey,
        body: { resolution: 'failed', note: 'n' },
      }),
    );
    expect(resolve).toMatchObject({ status: 403, code: 'auth.scope_missing' });
  });
});

describe('request errors', () => {
  it('malformed JSON is 400 request.invalid_json; an empty body where one is required too', async () => {
    for (const rawBody of ['{"agent_id": ', 'nope', '']) {
      const error = await errorOf(await h.call('POST', '/v1/sessions', { rawBody, headers: { 'Content-Type': 'application/json' } }));
      expect(error).toMatchObject({ status: 400, code: 'request.invalid_json' });
    }
  });

  it('wrong types are 400 request.invalid with the path, never the value', async () => {
    const secret = 'sk_live_do_not_echo_4f1c';
    const error = await errorOf(await h.call('POST', '/v1/runs', { body: { session_id: secret, deadline_seconds: 'soon' } }));
    expect(error).toMatchObject({ status: 400, code: 'request.invalid' });
    expect(error.message).toContain('body.session_id');
    expect(error.message).not.toContain(secret);

    const nested = await errorOf(
      await h.call('POST', `/v1/runs/${crypto.randomUUID()}/steps`, {
        body: { step_number: 1, calls: [{ call_id: 'c1', tool_name: 'math.evaluate', arguments: {}, context_trust: [secret] }] },
      }),
    );
    expect(nested).toMatchObject({ status: 400, code: 'request.invalid' });
    expect(nested.message).toContain('body.calls.0.context_trust.0');
    expect(nested.message).not.toContain(secret);
  });

  it('unknown fields are refused, in bodies, nested objects and queries', async () => {
    const top = await errorOf(await h.call('POST', '/v1/sessions', { body: { agent_id: 'a', admin: true } }));
    expect(top).toMatchObject({ status: 400, code: 'request.invalid' });
    expect(top.message).toContain('"admin"');
    const nested = await errorOf(
      await h.call('POST', '/v1/runs', {
        body: { session_id: crypto.randomUUID(), deadline_seconds: 10, budgets: { maximum_tool_calls: 1, unlimited: true } },
      }),
    );
    expect(nested).toMatchObject({ status: 400, code: 'request.invalid' });
    expect(nested.message).toContain('body.budgets');
    const query = await errorOf(await h.call('GET', '/v1/invocations?sort=desc'));
    expect(query).toMatchObject({ status: 400, code: 'request.invalid' });
    const noBody = await errorOf(await h.call('POST', `/v1/runs/${crypto.randomUUID()}/cancel`, { body: { force: true } }));
    expect(noBody).toMatchObject({ status: 400, code: 'request.invalid' });
  });

  it('a 10 MB body is 413 request.too_large (declared length, and streamed without one)', async () => {
    const big = JSON.stringify({ agent_id: 'x'.repeat(10 * 1024 * 1024) });
    const declared = await h.call('POST', '/v1/sessions', {
      rawBody: big,
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(big.length) },
    });
    expect(await errorOf(declared)).toMatchObject({ status: 413, code: 'request.too_large' });
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        const chunk = new TextEncoder().encode('x'.repeat(1024 * 1024));
        for (let i = 0; i < 10; i++) controller.enqueue(chunk);
        controller.close();
      },
    });
    const streamed = await h.api.app.request('http://api.test/v1/sessions', {
      method: 'POST',
      headers: { Authorization: `Bearer ${h.a.key}`, 'Content-Type': 'application/json' },
      body: chunks,
      duplex: 'half',
    } as RequestInit);
    expect(await errorOf(streamed)).toMatchObject({ status: 413, code: 'request.too_large' });
  });

  it('unknown routes and ids that are not ids are the same 404 not_found as a missing id', async () => {
    const missing = await errorOf(await h.call('GET', `/v1/sessions/${crypto.randomUUID()}`));
    expect(missing).toMatchObject({ status: 404, code: 'not_found' });
    for (const path of ['/v1/sessions/not-a-uuid', '/v1/nothing-here', '/v1/runs/123/steps/abc']) {
      expect((await errorOf(await h.call('GET', path))).body, path).toEqual(missing.body);
    }
  });

  it('a different batch under an existing step number is 409 step.conflict; a closed session refuses new runs', async () => {
    const { sessionId, runId } = await sessionAndRun(h);
    const call = { call_id: 'c1', tool_name: 'math.evaluate', arguments: { expression: '1+1' }, context_trust: ['user'] };
    expect((await h.call('POST', `/v1/runs/${runId}/steps`, { body: { step_number: 1, calls: [call], wait_seconds: 0 } })).status).toBe(
      202,
    );
    const conflict = await errorOf(
      await h.call('POST', `/v1/runs/${runId}/steps`, {
        body: { step_number: 1, calls: [{ ...call, arguments: { expression: '2+2' } }], wait_seconds: 0 },
      }),
    );
    expect(conflict).toMatchObject({ status: 409, code: 'step.conflict' });
    const duplicate = await errorOf(
      await h.call('POST', `/v1/runs/${runId}/steps`, { body: { step_number: 2, calls: [call, call], wait_seconds: 0 } }),
    );
    expect(duplicate).toMatchObject({ status: 400, code: 'request.invalid' });

    expect((await h.call('POST', `/v1/sessions/${sessionId}/close`)).status).toBe(200);
    const closed = await errorOf(await h.call('POST', '/v1/runs', { body: { session_id: sessionId, deadline_seconds: 60 } }));
    expect(closed).toMatchObject({ status: 409, code: 'session.closed' });
    const cancelled = await h.call('POST', `/v1/runs/${runId}/cancel`);
    expect(((await cancelled.json()) as { status: string }).status).toBe('cancelled');
    const notRunning = await errorOf(
      await h.call('POST', `/v1/runs/${runId}/steps`, { body: { step_number: 3, calls: [call], wait_seconds: 0 } }),
    );
    expect(notRunning).toMatchObject({ status: 409, code: 'run.not_active' });
  });

  it('an unexpected failure is 500 internal: no stack, no detail, logged', async () => {
    const logged: unknown[] = [];
    const broken = buildApp({
      ...h.system.deps,
      stores: {
        ...h.system.deps.stores,
        sessions: {
          ...h.system.deps.stores.sessions,
          get: async () => {
            throw new Error('connection string postgres://admin:hunter2@db/veetbot');
          },
        },
      },
      logError: (error) => logged.push(error),
    });
    const response = await broken.app.request(`http://api.test/v1/sessions/${crypto.randomUUID()}`, {
      headers: { Authorization: `Bearer ${h.a.key}` },
    });
    const error = await errorOf(response);
    expect(error).toMatchObject({ status: 500, code: 'internal' });
    expect(JSON.stringify(error.body)).not.toMatch(/hunter2|at |stack|Error/);
    expect(logged).toHaveLength(1);
  });

  it('a busy run is 503 run.busy with Retry-After (retryable)', async () => {
    const busy = buildApp({
      ...h.system.deps,
      runtime: {
        ...h.system.deps.runtime,
        openSessionWithReport: h.system.deps.runtime.openSessionWithReport.bind(h.system.deps.runtime),
        createRun: h.system.deps.runtime.createRun.bind(h.system.deps.runtime),
        cancelRun: async () => {
          const { RuntimeError } = await import('@veetbot/runtime');
          throw new RuntimeError('runtime.run_busy', 'busy');
        },
      },
    });
    const response = await busy.app.request(`http://api.test/v1/runs/${crypto.randomUUID()}/cancel`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${h.a.key}` },
    });
    expect(await errorOf(response)).toMatchObject({ status: 503, code: 'run.busy' });
    expect(response.headers.get('retry-after')).toBe('1');
  });
});
