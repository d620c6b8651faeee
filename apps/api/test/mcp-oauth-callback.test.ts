import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpConsentSuspensions, recordPendingConsent } from '@veetbot/composition';
import { SealedMcpTokenStore } from '@veetbot/credential-broker';
import { argumentsHash, idempotencyKey } from '@veetbot/domain';
import { DefaultEgressPolicy, type DelegatedFlowSnapshot, McpConsentRequiredError } from '@veetbot/mcp-adapter';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, errorOf, openApiHarness, sessionAndRun } from './harness';

/*
 * docs/adr/0082: GET /v1/mcp/oauth/callback against a real scripted authorization server on
 * loopback that redeems a code once, by the verifier of its challenge. A pending consent is
 * recorded as the worker records one (recordPendingConsent: the state hashed, the flow sealed);
 * the person's browser is a fetch that follows the authorization URL to the redirect back.
 */

const REDIRECT = 'http://api.test/v1/mcp/oauth/callback';
const SERVER_ID = 'acme';

/** The authorization server and its protected resource, scripted. */
class AuthorizationServer {
  readonly #codes = new Map<string, string>();
  readonly codes: string[] = [];
  readonly issued: string[] = [];
  readonly tokenForms: URLSearchParams[] = [];
  iss: string | null = null;
  #server: Server | null = null;
  base = '';

  metadata(): Record<string, unknown> {
    return {
      issuer: this.base,
      authorization_endpoint: `${this.base}/authorize`,
      token_endpoint: `${this.base}/token`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      authorization_response_iss_parameter_supported: true,
    };
  }

  async start(): Promise<void> {
    this.#server = createServer(async (req, res) => {
      const url = new URL(req.url ?? '/', this.base);
      let body = '';
      for await (const chunk of req) body += String(chunk);
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      if (url.pathname === '/.well-known/oauth-protected-resource/mcp')
        return json(200, { resource: `${this.base}/mcp`, authorization_servers: [this.base] });
      if (url.pathname === '/.well-known/oauth-authorization-server') return json(200, this.metadata());
      if (url.pathname === '/authorize') {
        const back = new URL(url.searchParams.get('redirect_uri') ?? '');
        const code = `code-${randomBytes(12).toString('hex')}`;
        this.#codes.set(code, url.searchParams.get('code_challenge') ?? '');
        this.codes.push(code);
        back.searchParams.set('code', code);
        back.searchParams.set('state', url.searchParams.get('state') ?? '');
        back.searchParams.set('iss', this.iss ?? this.base);
        res.writeHead(302, { location: back.href }).end();
        return;
      }
      if (url.pathname === '/token' && req.method === 'POST') {
        const form = new URLSearchParams(body);
        this.tokenForms.push(form);
        const challenge = this.#codes.get(form.get('code') ?? '');
        this.#codes.delete(form.get('code') ?? '');
        if (
          challenge === undefined ||
          createHash('sha256')
            .update(form.get('code_verifier') ?? '')
            .digest('base64url') !== challenge
        )
          return json(400, { error: 'invalid_grant' });
        const access = `at-${randomBytes(16).toString('hex')}`;
        const refresh = `rt-${randomBytes(16).toString('hex')}`;
        this.issued.push(access, refresh);
        return json(200, { access_token: access, token_type: 'Bearer', expires_in: 3600, refresh_token: refresh });
      }
      return json(404, { error: 'not_found' });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve());
  }
}

const as = new AuthorizationServer();
let h: ApiHarness;
let runId: string;
let invocationId: string;
const verifiers: string[] = [];
const states: string[] = [];
const captured: string[] = [];
let restore: () => void;

beforeAll(async () => {
  await as.start();
  h = await openApiHarness({ worker: false, egress: new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true }) });
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  const tee =
    (write: typeof process.stdout.write) =>
    (chunk: unknown, ...rest: unknown[]): boolean => {
      captured.push(String(chunk));
      return write(chunk as string, ...(rest as []));
    };
  process.stdout.write = tee(out) as typeof process.stdout.write;
  process.stderr.write = tee(err) as typeof process.stderr.write;
  restore = () => {
    process.stdout.write = out;
    process.stderr.write = err;
  };
  const scene = await sessionAndRun(h);
  runId = scene.runId;
  // The call that waits: a real tool_invocations row (the consent's foreign key).
  const stores = h.system.stores;
  const now = new Date();
  const lease = await stores.runs.acquireLease(h.a.tenantId, runId, 'test-worker', 30_000, now);
  if (!lease) throw new Error('no lease');
  const args = { title: 'x' };
  const base = { runId, sessionId: scene.sessionId, stepNumber: 1, callId: 'call_1', toolName: 'mcp.acme.create_ticket', toolVersion: '1' };
  invocationId = randomUUID();
  const hash = argumentsHash(args);
  await stores.invocations.insertIntent(
    h.a.tenantId,
    {
      id: invocationId,
      ...base,
      status: 'authorized',
      idempotencyKey: idempotencyKey({ ...base, argumentsHash: hash }),
      argumentsHash: hash,
      arguments: args,
      toolSource: 'mcp',
      serverId: SERVER_ID,
      idempotencyClass: 'non_idempotent',
      originTrust: 'user',
      parallelGroup: null,
      createdAt: now,
    },
    [],
  );
  await stores.runs.releaseLease(h.a.tenantId, { runId, fencingToken: lease.fencingToken });
}, 120_000);

afterAll(async () => {
  restore?.();
  await h?.close();
  await as.stop();
});

/** A flow as the worker's connection leaves it when a person must consent: the link, its state and the snapshot. */
function suspendedFlow(): { state: string; url: string; flow: DelegatedFlowSnapshot } {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(32).toString('base64url');
  verifiers.push(verifier);
  states.push(state);
  const authorize = new URL(`${as.base}/authorize`);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: 'client-1',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    redirect_uri: REDIRECT,
    state,
    resource: `${as.base}/mcp`,
  }).toString();
  return {
    state,
    url: authorize.href,
    flow: {
      serverUrl: `${as.base}/mcp`,
      resourceMetadataUrl: `${as.base}/.well-known/oauth-protected-resource/mcp`,
      scope: null,
      redirectUri: REDIRECT,
      codeVerifier: verifier,
      clientInformation: { client_id: 'client-1', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' },
      // What the worker's connection discovered (the SDK binds the callback leg to it, SEP-2352).
      discoveryState: {
        authorizationServerUrl: as.base,
        resourceMetadataUrl: `${as.base}/.well-known/oauth-protected-resource/mcp`,
        resourceMetadata: { resource: `${as.base}/mcp`, authorization_servers: [as.base] },
        authorizationServerMetadata: as.metadata(),
      },
      issuer: as.base,
    },
  };
}

/** A pending consent as the worker records one, and its authorization URL. */
async function pending(options: { now?: Date } = {}): Promise<{ id: string; state: string; url: string }> {
  const { state, url, flow } = suspendedFlow();
  const id = await recordPendingConsent(
    { consents: h.system.stores.mcpPendingConsents, keyring: h.system.deps.secretKeyring },
    {
      tenantId: h.a.tenantId,
      principalId: h.a.principal.principal_id,
      runId,
      invocationId,
      serverId: SERVER_ID,
      authorizationUrl: url,
      state,
      flow,
      now: options.now ?? new Date(),
    },
  );
  return { id, state, url };
}

/** The person's browser: the authorization server redirects it back; the query it would carry to the api. */
async function consent(url: string): Promise<string> {
  const response = await fetch(url, { redirect: 'manual' });
  return new URL(response.headers.get('location') ?? '').search;
}

const callback = (search: string) => h.call('GET', `/v1/mcp/oauth/callback${search}`, { key: null });
const tokens = () => new SealedMcpTokenStore(h.system.stores.mcpDelegatedGrants, h.system.deps.secretKeyring);
const owner = () => ({ tenantId: h.a.tenantId, principalId: h.a.principal.principal_id, serverId: SERVER_ID });

describe('GET /v1/mcp/oauth/callback (docs/adr/0082)', () => {
  it('without an API key: exchanges the code with the sealed verifier, saves the grant sealed for the recorded principal, uses the state up', async () => {
    const p = await pending();
    // The run view shows the link to the principal's key, and to no other tenant.
    const view = (await (await h.call('GET', `/v1/runs/${runId}`)).json()) as { authorization: unknown };
    expect(view.authorization).toEqual({
      url: p.url,
      server_id: SERVER_ID,
      principal_id: h.a.principal.principal_id,
      expires_at: expect.any(String),
    });
    // An hour (PENDING_CONSENT_TTL_SECONDS) from when the worker recorded it.
    const row = (await h.system.stores.mcpPendingConsents.get(h.a.tenantId, p.id))!;
    expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBe(3600 * 1000);
    expect((await h.call('GET', `/v1/runs/${runId}`, { key: h.b.key })).status).toBe(404);
    const response = await callback(await consent(p.url));
    expect(response.status).toBe(200);
    expect(((await (await h.call('GET', `/v1/runs/${runId}`)).json()) as { authorization: unknown }).authorization).toBeNull();
    expect(await response.json()).toEqual({ status: 'authorized', run_id: runId, server_id: SERVER_ID });
    const form = as.tokenForms.at(-1)!;
    expect(form.get('grant_type')).toBe('authorization_code');
    expect(form.get('code_verifier')).toBe(verifiers.at(-1));
    expect(form.get('redirect_uri')).toBe(REDIRECT);
    expect(await tokens().load(owner())).toMatchObject({ accessToken: as.issued.at(-2), refreshToken: as.issued.at(-1), issuer: as.base });
    expect((await h.system.stores.mcpPendingConsents.get(h.a.tenantId, p.id))!.usedAt).not.toBeNull();
    expect(await h.system.stores.mcpPendingConsents.listOpenForRun(h.a.tenantId, runId)).not.toContainEqual(
      expect.objectContaining({ id: p.id }),
    );
  });

  it('a replayed response is mcp.auth.state_replayed (409), and the code is not presented again', async () => {
    const p = await pending();
    const search = await consent(p.url);
    expect((await callback(search)).status).toBe(200);
    const tokenRequests = as.tokenForms.length;
    expect(await errorOf(await callback(search))).toMatchObject({ status: 409, code: 'mcp.auth.state_replayed' });
    expect(as.tokenForms.length).toBe(tokenRequests);
  });

  it('an unknown, missing, doubled or oversized state is mcp.auth.state_mismatch (400), never echoed', async () => {
    const p = await pending();
    const search = new URLSearchParams((await consent(p.url)).slice(1));
    const forged = `forged-${randomBytes(8).toString('hex')}`;
    for (const query of [
      `?code=${search.get('code')}&state=${forged}`,
      `?code=${search.get('code')}`,
      `?code=${search.get('code')}&state=${encodeURIComponent(p.state)}&state=${encodeURIComponent(p.state)}`,
      `?code=${search.get('code')}&state=${'s'.repeat(600)}`,
    ]) {
      const refused = await errorOf(await callback(query));
      expect(refused).toMatchObject({ status: 400, code: 'mcp.auth.state_mismatch' });
      expect(JSON.stringify(refused.body)).not.toContain(forged);
    }
    expect((await h.system.stores.mcpPendingConsents.get(h.a.tenantId, p.id))!.usedAt).toBeNull();
  });

  it('an expired consent is mcp.auth.state_mismatch, and nothing is exchanged', async () => {
    const p = await pending({ now: new Date(Date.now() - 2 * 3600 * 1000) });
    const tokenRequests = as.tokenForms.length;
    expect(await errorOf(await callback(await consent(p.url)))).toMatchObject({ status: 400, code: 'mcp.auth.state_mismatch' });
    expect(as.tokenForms.length).toBe(tokenRequests);
  });

  it('an iss that is not the recorded issuer is mcp.auth.issuer_mismatch (RFC 9207), before any token request', async () => {
    const p = await pending();
    as.iss = 'https://evil.example';
    const search = await consent(p.url);
    as.iss = null;
    const tokenRequests = as.tokenForms.length;
    expect(await errorOf(await callback(search))).toMatchObject({ status: 400, code: 'mcp.auth.issuer_mismatch' });
    expect(as.tokenForms.length).toBe(tokenRequests);
  });

  it('an injected code (issued for another flow) is refused by the authorization server: mcp.auth.flow_failed (502); no grant moves', async () => {
    await tokens().revoke(owner());
    const victim = await pending();
    const attacker = await pending();
    const attackerCode = new URLSearchParams((await consent(attacker.url)).slice(1)).get('code')!;
    const injected = `?code=${attackerCode}&state=${encodeURIComponent(victim.state)}&iss=${encodeURIComponent(as.base)}`;
    expect(await errorOf(await callback(injected))).toMatchObject({ status: 502, code: 'mcp.auth.flow_failed' });
    expect(await tokens().load(owner())).toBeNull();
    // The state is used up by the attempt: a second try is a replay.
    expect(await errorOf(await callback(injected))).toMatchObject({ status: 409, code: 'mcp.auth.state_replayed' });
  });

  it("the executor's host: the adapter's consent error inside a connect failure becomes a pending consent; answered once the callback used it", async () => {
    const host = new McpConsentSuspensions({ consents: h.system.stores.mcpPendingConsents, keyring: h.system.deps.secretKeyring });
    const call = {
      tenantId: h.a.tenantId,
      principalId: h.a.principal.principal_id,
      runId,
      invocationId,
      serverId: SERVER_ID,
      at: new Date(),
    };
    expect(await host.suspend(new Error('an ordinary failure'), call)).toBeNull();
    const { state, url, flow } = suspendedFlow();
    const wrapped = new Error('The server could not be connected (tool.auth_unsupported).', {
      cause: new McpConsentRequiredError(url, state, flow),
    });
    expect(await host.suspend(wrapped, { ...call, serverId: null })).toBeNull();
    const suspended = await host.suspend(wrapped, call);
    expect(suspended).toEqual({
      id: expect.any(String),
      authorizationUrl: url,
      serverId: SERVER_ID,
      principalId: h.a.principal.principal_id,
    });
    // The flow is handed over once: the same error cannot make a second consent.
    expect(await host.suspend(wrapped, call)).toBeNull();
    expect(await host.answered(h.a.tenantId, suspended!.id)).toBe(false);
    expect(await host.answered(h.b.tenantId, suspended!.id)).toBe(false);
    expect((await callback(await consent(url))).status).toBe(200);
    expect(await host.answered(h.a.tenantId, suspended!.id)).toBe(true);
  });

  it('a consent row whose clear issuer was altered does not open: credential.secret_unreadable, nothing exchanged', async () => {
    const p = await pending();
    const native = h.database.native;
    if (native.driver !== 'pglite') throw new Error('the api harness runs on PGlite');
    await native.client.query("update mcp_pending_consents set issuer = 'https://evil.example' where id = $1", [p.id]);
    const search = new URLSearchParams((await consent(p.url)).slice(1));
    search.set('iss', 'https://evil.example');
    const tokenRequests = as.tokenForms.length;
    expect(await errorOf(await callback(`?${search.toString()}`))).toMatchObject({ status: 500, code: 'credential.secret_unreadable' });
    expect(as.tokenForms.length).toBe(tokenRequests);
  });

  it('no token, code, verifier or state appears in a row, an event, the output or a logged error', async () => {
    const native = h.database.native;
    if (native.driver !== 'pglite') throw new Error('the api harness runs on PGlite');
    const rows = await native.client.query(
      "select t::text as row, encode(ciphertext, 'hex') as hex, encode(ciphertext, 'escape') as raw from mcp_delegated_grants t union all select t::text, encode(ciphertext, 'hex'), encode(ciphertext, 'escape') from mcp_pending_consents t",
    );
    expect(rows.rows.length).toBeGreaterThan(1);
    // The link carries the state by design (it is what a person opens); the rest of the row must not.
    const consentsWithoutLink = await native.client.query(
      "select (to_jsonb(t) - 'authorization_url')::text as row from mcp_pending_consents t",
    );
    const events = await native.client.query('select payload::text as p from events');
    const haystack = [
      JSON.stringify(rows.rows.filter((r) => !String((r as { row: string }).row).includes('/authorize?'))),
      JSON.stringify(consentsWithoutLink.rows),
      JSON.stringify(events.rows),
      captured.join(''),
      JSON.stringify(h.errors.map((e) => String(e))),
    ].join('\n');
    const secrets = [...as.issued, ...as.codes, ...verifiers, ...states];
    expect(as.issued.length).toBeGreaterThan(3);
    for (const secret of secrets)
      for (const form of [secret, Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('hex'), encodeURIComponent(secret)])
        expect(haystack).not.toContain(form);
  });
});
