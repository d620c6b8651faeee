import { SecretRedactor, VeetbotError } from '@veetbot/domain';
import type { McpDelegatedAuthorization, McpDelegatedTokens, McpDelegatedTokenStore } from '@veetbot/ports';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { completeDelegatedConsent } from '../src/auth/delegated-consent';
import { DelegatedFetch } from '../src/auth/delegated-fetch';
import { DelegatedGrant } from '../src/auth/delegated-grant';
import { createOAuthFetch } from '../src/auth/oauth-fetch';
import { PinnedHttpClient } from '../src/egress/pinned-fetch';
import { type DelegatedFlowSnapshot, McpConsentRequiredError } from '../src/errors';
import { DefaultEgressPolicy } from '../src/index';
import { ScriptedAuthorizationServer } from './helpers/scripted-authorization-server';

/*
 * docs/adr/0082: a flow the worker's connection started and suspended (consent_needed) is
 * finished elsewhere — the api's callback — from its snapshot: against a real scripted
 * authorization server that redeems a code once, by the verifier of its challenge.
 */

const REDIRECT = 'http://127.0.0.1:8976/v1/mcp/oauth/callback';
const LOOPBACK = new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true });
const BOUND = { maxResponseBytes: 64 * 1024, timeoutMs: 10_000 };
const OWNER = { tenantId: 't1', principalId: 'alice', serverId: 'acme' };

const server = new ScriptedAuthorizationServer();
beforeAll(() => server.start());
afterAll(() => server.stop());
afterEach(() => {
  server.script = {};
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

/** One request through a connection whose user agent can only say consent_needed (the worker's). */
async function request(store: McpDelegatedTokenStore): Promise<Response> {
  const redactor = new SecretRedactor();
  const port: McpDelegatedAuthorization = {
    redirectUri: REDIRECT,
    clientName: 'veetbot test',
    tokens: store,
    userAgent: { authorize: async () => ({ kind: 'consent_needed' }) },
  };
  const grant = new DelegatedGrant({ owner: OWNER, port, egress: LOOPBACK, redactor, preRegistered: null, signal: () => undefined });
  await grant.load();
  const decision = await LOOPBACK.check(server.resourceUrl);
  if (!decision.allowed) throw new Error('the scripted server must be reachable');
  const http = new PinnedHttpClient(decision, { maxLineBytes: 64 * 1024 });
  try {
    const fetch = new DelegatedFetch(grant, new URL(server.resourceUrl), createOAuthFetch({ egress: LOOPBACK, ...BOUND }), redactor).wrap(
      http.fetch,
    );
    return await fetch(server.resourceUrl, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
  } finally {
    http.close();
  }
}

interface Suspended {
  readonly error: McpConsentRequiredError;
  readonly flow: DelegatedFlowSnapshot;
}

async function suspended(store: McpDelegatedTokenStore): Promise<Suspended> {
  try {
    await request(store);
  } catch (error) {
    if (!(error instanceof McpConsentRequiredError)) throw error;
    const flow = error.takeFlow();
    if (flow === null) throw new Error('the consent carries no flow');
    return { error, flow };
  }
  throw new Error('the request was expected to need consent');
}

/** The person's browser: follows the authorization URL to the redirect back (never dialled). */
async function consent(url: string): Promise<string> {
  const response = await fetch(url, { redirect: 'manual' });
  const location = response.headers.get('location');
  if (location === null) throw new Error('the authorization server did not redirect');
  return location;
}

function complete(s: Suspended, callbackUrl: string, store: McpDelegatedTokenStore, redactor = new SecretRedactor()) {
  return completeDelegatedConsent({
    owner: OWNER,
    flow: s.flow,
    state: s.error.state,
    callbackUrl,
    tokens: store,
    egress: LOOPBACK,
    redactor,
    ...BOUND,
  });
}

async function refusal(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    return codeOf(error);
  }
  return 'no refusal';
}

describe('consent completed by another process (docs/adr/0082)', () => {
  it('the suspended flow carries verifier, client and issuer once; the callback exchanges the code; the next connection presents the bearer', async () => {
    const store = new MemoryTokenStore();
    const s = await suspended(store);
    expect(s.error.takeFlow()).toBeNull();
    expect(JSON.stringify(s.error)).not.toContain(s.flow.codeVerifier);
    expect(s.flow).toMatchObject({ serverUrl: server.resourceUrl, redirectUri: REDIRECT, issuer: server.base });
    expect(s.flow.clientInformation).toMatchObject({ client_id: 'client-1' });
    const callbackUrl = await consent(s.error.authorizationUrl);
    expect(new URL(callbackUrl).searchParams.get('state')).toBe(s.error.state);
    await complete(s, callbackUrl, store);
    expect(store.saved).toHaveLength(1);
    expect(store.saved[0]).toMatchObject({ accessToken: server.accepted, issuer: server.base });
    expect(server.tokenForms.at(-1)!.get('code_verifier')).toBe(s.flow.codeVerifier);
    const response = await request(store);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ ok: true });
  });

  it('refuses a replayed authorization response: the authorization server redeems a code once', async () => {
    const store = new MemoryTokenStore();
    const s = await suspended(store);
    const callbackUrl = await consent(s.error.authorizationUrl);
    await complete(s, callbackUrl, store);
    expect(await refusal(complete(s, callbackUrl, store))).toBe('mcp.auth.flow_failed');
    expect(store.saved).toHaveLength(1);
  });

  it('refuses an injected code (one the authorization server did not issue for this verifier)', async () => {
    const store = new MemoryTokenStore();
    const s = await suspended(store);
    const other = await suspended(new MemoryTokenStore());
    const foreign = new URL(await consent(other.error.authorizationUrl)).searchParams.get('code')!;
    const injected = `${REDIRECT}?code=${foreign}&state=${encodeURIComponent(s.error.state)}`;
    expect(await refusal(complete(s, injected, store))).toBe('mcp.auth.flow_failed');
    expect(await refusal(complete(s, `${REDIRECT}?code=forged&state=${encodeURIComponent(s.error.state)}`, store))).toBe(
      'mcp.auth.flow_failed',
    );
    expect(store.saved).toHaveLength(0);
  });

  it('refuses another state, another redirect target, an error response and an iss of another issuer', async () => {
    const store = new MemoryTokenStore();
    server.script = { metadata: { authorization_response_iss_parameter_supported: true }, callbackIss: 'https://evil.example' };
    const s = await suspended(store);
    const callbackUrl = new URL(await consent(s.error.authorizationUrl));
    const tokenRequests = server.tokenForms.length;
    const withState = new URL(callbackUrl);
    withState.searchParams.set('state', 'another');
    expect(await refusal(complete(s, withState.href, store))).toBe('mcp.auth.state_mismatch');
    expect(await refusal(complete(s, callbackUrl.href.replace('/v1/mcp/oauth/callback', '/elsewhere'), store))).toBe(
      'mcp.auth.authorization_refused',
    );
    expect(await refusal(complete(s, `${REDIRECT}?error=access_denied&state=${encodeURIComponent(s.error.state)}`, store))).toBe(
      'mcp.auth.authorization_refused',
    );
    expect(await refusal(complete(s, callbackUrl.href, store))).toBe('mcp.auth.issuer_mismatch');
    expect(server.tokenForms.length).toBe(tokenRequests);
    expect(store.saved).toHaveLength(0);
  });
});
