import { SecretRedactor, VeetbotError } from '@veetbot/domain';
import type { McpAuthorizationUserAgent, McpDelegatedAuthorization, McpDelegatedTokens, McpDelegatedTokenStore } from '@veetbot/ports';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { autoApprovingUserAgent } from '../src/auth/check-mode-user-agent';
import { DelegatedFetch, STEP_UP_MAX_ATTEMPTS } from '../src/auth/delegated-fetch';
import { CredentialState } from '../src/auth/credential-state';
import { DelegatedGrant, type PreRegisteredClient } from '../src/auth/delegated-grant';
import { createOAuthFetch } from '../src/auth/oauth-fetch';
import { PinnedHttpClient } from '../src/egress/pinned-fetch';
import { DefaultEgressPolicy } from '../src/index';
import { McpConsentRequiredError } from '../src/errors';
import { ScriptedAuthorizationServer } from './helpers/scripted-authorization-server';
import { MutableCredentials } from './helpers/fakes';
import { serverConfig } from './helpers/harness';

/*
 * docs/adr/0077: the delegated authorization flow (authorization code + PKCE) against a real
 * scripted authorization server on loopback — the good path, refresh with rotation, and every
 * hostile answer refused with its stable code. Loopback is reachable only through the
 * operator's switch (allowPrivateAddresses); a test shows the same URL refused without it.
 */

const REDIRECT = 'http://127.0.0.1:8976/oauth/callback';
const LOOPBACK = new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true });
const BOUND = { maxResponseBytes: 64 * 1024, timeoutMs: 10_000 };

const server = new ScriptedAuthorizationServer();
beforeAll(() => server.start());
afterAll(() => server.stop());
afterEach(() => {
  server.script = {};
  server.echo = '';
});

class MemoryTokenStore implements McpDelegatedTokenStore {
  readonly saved: McpDelegatedTokens[] = [];
  async load(): Promise<McpDelegatedTokens | null> {
    return this.saved.at(-1) ?? null;
  }
  async save(_owner: unknown, tokens: McpDelegatedTokens): Promise<void> {
    this.saved.push(tokens);
  }
  async revoke(): Promise<void> {
    this.saved.length = 0;
  }
}

function codeOf(error: unknown): string {
  return VeetbotError.isInstance(error) ? error.code : `not ours: ${String(error)}`;
}

interface Flow {
  readonly request: () => Promise<Response>;
  readonly grant: DelegatedGrant;
  readonly redactor: SecretRedactor;
  readonly store: MemoryTokenStore;
  readonly close: () => void;
}

async function flow(
  options: {
    egress?: DefaultEgressPolicy;
    userAgent?: McpAuthorizationUserAgent;
    preRegistered?: PreRegisteredClient;
    redactor?: SecretRedactor;
  } = {},
): Promise<Flow> {
  const redactor = options.redactor ?? new SecretRedactor();
  const egress = options.egress ?? LOOPBACK;
  const store = new MemoryTokenStore();
  const port: McpDelegatedAuthorization = {
    redirectUri: REDIRECT,
    clientName: 'veetbot test',
    tokens: store,
    userAgent: options.userAgent ?? autoApprovingUserAgent({ egress, ...BOUND }),
  };
  const grant = new DelegatedGrant({
    owner: { tenantId: 't1', principalId: 'p1', serverId: 's1' },
    port,
    egress,
    redactor,
    preRegistered: options.preRegistered ?? null,
    signal: () => undefined,
  });
  // The resource itself is dialled as a tenant server always is (checked once, pinned).
  const decision = await LOOPBACK.check(server.resourceUrl);
  if (!decision.allowed) throw new Error('the scripted server must be reachable');
  const http = new PinnedHttpClient(decision, { maxLineBytes: 64 * 1024 });
  const fetch = new DelegatedFetch(grant, new URL(server.resourceUrl), createOAuthFetch({ egress, ...BOUND }), redactor).wrap(http.fetch);
  return {
    request: () => fetch(server.resourceUrl, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }),
    grant,
    redactor,
    store,
    close: () => http.close(),
  };
}

async function failure(f: Flow): Promise<unknown> {
  try {
    await f.request();
  } catch (error) {
    return error;
  } finally {
    f.close();
  }
  throw new Error('the request was expected to fail');
}

describe('delegated authorization: the authorization code grant', () => {
  it('discovers, registers, authorizes with PKCE S256, a bound state and the resource indicator, and presents the token', async () => {
    const f = await flow();
    const tokensBefore = server.tokenForms.length;
    const response = await f.request();
    f.close();
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ ok: true });
    const query = server.authorizeQueries.at(-1)!;
    expect(query.get('code_challenge_method')).toBe('S256');
    expect(query.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(query.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(query.get('resource')).toBe(server.resourceUrl);
    expect(query.get('client_id')).toBe('client-1');
    const form = server.tokenForms.at(-1)!;
    expect(server.tokenForms.length).toBe(tokensBefore + 1);
    expect(form.get('grant_type')).toBe('authorization_code');
    expect(form.get('code_verifier')).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);
    expect(form.get('resource')).toBe(server.resourceUrl);
    expect(f.store.saved.at(-1)?.accessToken).toBe(server.accepted);
  });

  it('refreshes with rotation when the server stops accepting the token', async () => {
    const f = await flow();
    expect((await f.request()).status).toBe(200);
    const firstRefresh = f.store.saved.at(-1)!.refreshToken;
    server.accepted = 'none'; // the access token expired or was revoked
    expect((await f.request()).status).toBe(200);
    f.close();
    const form = server.tokenForms.at(-1)!;
    expect(form.get('grant_type')).toBe('refresh_token');
    expect(form.get('refresh_token')).toBe(firstRefresh);
    expect(form.get('resource')).toBe(server.resourceUrl);
    const rotated = f.store.saved.at(-1)!;
    expect(rotated.refreshToken).not.toBe(firstRefresh);
    expect(rotated.accessToken).toBe(server.accepted);
  });

  it('without a user agent that can act, ends tool.auth_unsupported carrying the link and its state', async () => {
    const error = await failure(await flow({ userAgent: { authorize: async () => ({ kind: 'consent_needed' }) } }));
    expect(error).toBeInstanceOf(McpConsentRequiredError);
    const consent = error as McpConsentRequiredError;
    expect(consent.code).toBe('tool.auth_unsupported');
    expect(new URL(consent.authorizationUrl).searchParams.get('state')).toBe(consent.state);
  });
});

describe('delegated authorization: hostile authorization servers', () => {
  it('refuses authorization server metadata at the cloud metadata address, even with loopback allowed', async () => {
    server.script = { resourceMetadata: { authorization_servers: ['http://169.254.169.254/'] } };
    expect(codeOf(await failure(await flow()))).toBe('mcp.auth.endpoint_refused');
  });

  it('refuses the loopback authorization server once the operator switch is off', async () => {
    const error = await failure(await flow({ egress: new DefaultEgressPolicy({ allowHttp: true }) }));
    expect(codeOf(error)).toBe('mcp.auth.endpoint_refused');
    expect((error as Error).message).toContain('egress.address_refused');
  });

  it('re-checks every redirect hop: one to the metadata address is refused, one within policy is followed', async () => {
    const fetchFn = createOAuthFetch({ egress: LOOPBACK, ...BOUND });
    server.script = { redirectTo: 'http://169.254.169.254/latest/meta-data/' };
    await expect(fetchFn(`${server.base}/redirect`)).rejects.toMatchObject({ code: 'mcp.auth.endpoint_refused' });
    server.script = { redirectTo: `${server.base}/.well-known/oauth-authorization-server` };
    const followed = await fetchFn(`${server.base}/redirect`);
    expect(followed.status).toBe(200);
    expect(await followed.json()).toMatchObject({ issuer: server.base });
    // A POST never follows one.
    await expect(fetchFn(`${server.base}/redirect`, { method: 'POST', body: 'x=1' })).rejects.toMatchObject({
      code: 'mcp.auth.endpoint_refused',
    });
  });

  it('bounds an oversized metadata document and an oversized token response', async () => {
    server.script = { metadataPadding: 200 * 1024 };
    expect(codeOf(await failure(await flow()))).toBe('mcp.transport.response_too_large');
    server.script = { tokenPadding: 200 * 1024 };
    expect(codeOf(await failure(await flow()))).toBe('mcp.transport.response_too_large');
  });

  it('refuses a replayed authorization response: the state is single use', async () => {
    const callbacks: string[] = [];
    const agent = autoApprovingUserAgent({ egress: LOOPBACK, ...BOUND });
    const f = await flow({
      userAgent: {
        authorize: async (request, signal) => {
          const outcome = await agent.authorize(request, signal);
          if (outcome.kind === 'callback') callbacks.push(outcome.callbackUrl);
          return outcome;
        },
      },
    });
    expect((await f.request()).status).toBe(200);
    f.close();
    expect(callbacks).toHaveLength(1);
    let replayed: unknown;
    try {
      f.grant.acceptCallback(callbacks[0]!);
    } catch (error) {
      replayed = error;
    }
    expect(codeOf(replayed)).toBe('mcp.auth.state_mismatch');
  });

  it("refuses an injected code (another flow's state) before any token request", async () => {
    const other = await flow();
    const foreignState = other.grant.state();
    other.close();
    const tokenRequests = server.tokenForms.length;
    const error = await failure(
      await flow({
        userAgent: { authorize: async () => ({ kind: 'callback', callbackUrl: `${REDIRECT}?code=injected&state=${foreignState}` }) },
      }),
    );
    expect(codeOf(error)).toBe('mcp.auth.state_mismatch');
    expect(server.tokenForms.length).toBe(tokenRequests);
  });

  it('refuses metadata whose issuer is not the authorization server (RFC 8414 §3.3)', async () => {
    server.script = { metadata: { issuer: 'https://evil.example/' } };
    expect(codeOf(await failure(await flow()))).toBe('mcp.auth.issuer_mismatch');
  });

  it('refuses an authorization response whose iss is another issuer (RFC 9207 mix-up) before any token request', async () => {
    server.script = { metadata: { authorization_response_iss_parameter_supported: true }, callbackIss: 'https://evil.example' };
    const tokenRequests = server.tokenForms.length;
    expect(codeOf(await failure(await flow()))).toBe('mcp.auth.issuer_mismatch');
    expect(server.tokenForms.length).toBe(tokenRequests);
  });

  it('refuses a token response without access_token', async () => {
    server.script = { tokenResponse: () => ({ token_type: 'Bearer', expires_in: 3600 }) };
    expect(codeOf(await failure(await flow()))).toBe('mcp.auth.token_response_invalid');
  });

  it('refuses an authorization_endpoint on plain http', async () => {
    server.script = { metadata: { authorization_endpoint: 'http://auth.example.test/authorize' } };
    const before = server.authorizeQueries.length;
    expect(codeOf(await failure(await flow()))).toBe('mcp.auth.insecure_endpoint');
    expect(server.authorizeQueries.length).toBe(before);
  });

  it('stops stepping up after the retry limit on repeated insufficient_scope', async () => {
    server.script = { insufficientScope: true };
    const before = server.authorizeQueries.length;
    expect(codeOf(await failure(await flow()))).toBe('mcp.auth.step_up_exhausted');
    const attempts = server.authorizeQueries.length - before;
    expect(attempts).toBe(1 + STEP_UP_MAX_ATTEMPTS);
    expect(attempts).toBeLessThanOrEqual(3);
    expect(server.authorizeQueries.at(-1)!.get('scope')).toBe('admin');
  });
});

const PRE_SECRET = 'pre-registered s3cret:with%odd chars';

/**
 * docs/adr/0083: the operator's pre-registered client with a secret, as mcp-connection wires it —
 * the secret resolved by the connection's CredentialState, which alone builds each token
 * request's client authentication from the server's supported methods.
 */
async function preRegisteredFlow(methods: string[] | undefined, configured?: string): Promise<Flow> {
  const redactor = new SecretRedactor();
  const config = serverConfig({
    serverId: 'pre',
    transport: 'http',
    endpoint: server.resourceUrl,
    authScheme: 'none',
    oauthClient: {
      client_id: 'pre-1',
      client_secret_ref: 'env:PRE',
      ...(configured === undefined ? {} : { token_endpoint_auth_method: configured }),
    },
  });
  const credential = new CredentialState(config, {
    credentials: new MutableCredentials({ 'env:PRE': PRE_SECRET }),
    egress: LOOPBACK,
    now: () => new Date(),
    requestTimeoutMs: 10_000,
    maxLineBytes: 64 * 1024,
    redactor,
  });
  await credential.establish();
  expect(credential.hasClientSecret).toBe(true);
  server.script = { metadata: { token_endpoint_auth_methods_supported: methods, registration_endpoint: undefined } };
  return flow({
    redactor,
    preRegistered: { clientId: 'pre-1', authenticate: (supported) => credential.tokenRequestAuthentication(supported) },
  });
}

function decodeBasic(header: string | undefined): string {
  return Buffer.from((header ?? '').replace(/^Basic /, ''), 'base64').toString('utf8');
}

describe('delegated authorization: a pre-registered client with a secret (docs/adr/0083)', () => {
  it('authenticates its code exchange with client_secret_basic, the secret only in the Authorization header', async () => {
    const f = await preRegisteredFlow(['client_secret_basic']);
    const registrations = server.requests.filter((r) => r === 'POST /register').length;
    expect((await f.request()).status).toBe(200);
    f.close();
    expect(server.authorizeQueries.at(-1)!.get('client_id')).toBe('pre-1');
    expect(server.requests.filter((r) => r === 'POST /register')).toHaveLength(registrations);
    expect(decodeBasic(server.tokenAuthorizations.at(-1))).toBe(`pre-1:${encodeURIComponent(PRE_SECRET).replace(/%20/g, '+')}`);
    const form = server.tokenForms.at(-1)!;
    expect(form.get('grant_type')).toBe('authorization_code');
    expect(form.get('client_secret')).toBeNull();
    expect(form.toString()).not.toContain(encodeURIComponent(PRE_SECRET));
  });

  it('client_secret_basic when the server names no methods; client_secret_post when it offers only that', async () => {
    const quiet = await preRegisteredFlow(undefined);
    expect((await quiet.request()).status).toBe(200);
    quiet.close();
    expect(decodeBasic(server.tokenAuthorizations.at(-1))).toMatch(/^pre-1:/);

    const post = await preRegisteredFlow(['client_secret_post']);
    expect((await post.request()).status).toBe(200);
    post.close();
    expect(server.tokenAuthorizations.at(-1)).toBeUndefined();
    const form = server.tokenForms.at(-1)!;
    expect(form.get('client_id')).toBe('pre-1');
    expect(form.get('client_secret')).toBe(PRE_SECRET);
  });

  it('the refresh authenticates the same way', async () => {
    const f = await preRegisteredFlow(['client_secret_basic']);
    expect((await f.request()).status).toBe(200);
    server.accepted = 'none';
    expect((await f.request()).status).toBe(200);
    f.close();
    expect(server.tokenForms.at(-1)!.get('grant_type')).toBe('refresh_token');
    expect(decodeBasic(server.tokenAuthorizations.at(-1))).toMatch(/^pre-1:/);
  });

  it('refuses mcp.auth.client_auth_unsupported, sending nothing, when the server offers no method for a secret', async () => {
    const tokenRequests = server.tokenForms.length;
    const onlyJwt = await failure(await preRegisteredFlow(['private_key_jwt']));
    expect(codeOf(onlyJwt)).toBe('mcp.auth.client_auth_unsupported');
    const configuredElsewhere = await failure(await preRegisteredFlow(['client_secret_basic'], 'client_secret_post'));
    expect(codeOf(configuredElsewhere)).toBe('mcp.auth.client_auth_unsupported');
    expect(server.tokenForms.length).toBe(tokenRequests);
    for (const error of [onlyJwt, configuredElsewhere]) {
      for (let at: unknown = error; typeof at === 'object' && at !== null; at = (at as { cause?: unknown }).cause)
        expect(`${String(at)} ${JSON.stringify(at)} ${(at as Error).stack ?? ''}`).not.toContain(PRE_SECRET);
    }
  });

  it('the secret is never logged, and a server echoing it is scrubbed', async () => {
    const captured: string[] = [];
    const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void captured.push(args.map(String).join(' '))),
    );
    let scrubbed = '';
    try {
      const f = await preRegisteredFlow(['client_secret_post']);
      expect((await f.request()).status).toBe(200);
      server.echo = PRE_SECRET;
      scrubbed = f.redactor.redact(await (await f.request()).text());
      f.close();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(scrubbed).toContain('"ok":true');
    expect(`${captured.join('\n')}\n${scrubbed}`).not.toContain(PRE_SECRET);
  });
});

describe('delegated authorization: tokens never leave the grant', () => {
  it('no access or refresh token, code or verifier appears in logs, errors or a scrubbed echo', async () => {
    const captured: string[] = [];
    const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void captured.push(args.map(String).join(' '))),
    );
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      captured.push(String(chunk));
      return true;
    });
    const errors: unknown[] = [];
    let scrubbed = '';
    try {
      const f = await flow();
      expect((await f.request()).status).toBe(200);
      server.echo = server.accepted!;
      scrubbed = f.redactor.redact(await (await f.request()).text());
      // A refresh that is answered without a token, then a hostile flow: both fail.
      server.accepted = 'none';
      server.script = { tokenResponse: () => ({ token_type: 'Bearer', note: server.issued.join(' ') }) };
      errors.push(await failure(f));
      server.script = { metadata: { issuer: 'https://evil.example/' } };
      errors.push(await failure(await flow()));
    } finally {
      for (const spy of spies) spy.mockRestore();
      stderr.mockRestore();
    }
    expect(errors.map(codeOf)).toEqual(['mcp.auth.token_response_invalid', 'mcp.auth.issuer_mismatch']);
    const text = [
      ...captured,
      scrubbed,
      ...errors.flatMap((error) => {
        const chain: string[] = [];
        for (let at: unknown = error; typeof at === 'object' && at !== null; at = (at as { cause?: unknown }).cause)
          chain.push(String(at), JSON.stringify(at), (at as Error).stack ?? '');
        return chain;
      }),
    ].join('\n');
    const secrets = [
      ...server.issued,
      ...server.codesIssued,
      ...server.tokenForms.map((form) => form.get('code_verifier') ?? '').filter(Boolean),
    ];
    expect(secrets.length).toBeGreaterThan(3);
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(scrubbed).not.toContain(server.issued[0]);
  });
});
