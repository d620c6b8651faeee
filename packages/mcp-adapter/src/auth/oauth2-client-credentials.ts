import type { EgressPolicy, SecretValue } from '@veetbot/ports';
import { McpAdapterError, McpAuthError } from '../errors';
import { PinnedHttpClient } from '../egress/pinned-fetch';

export interface AccessToken {
  readonly value: string;
  /** Null when the endpoint gave no expires_in: used until a 401 says otherwise. */
  readonly expiresAt: Date | null;
}

export interface ClientCredentialsRequest {
  readonly tokenEndpoint: string;
  readonly scopes: readonly string[] | null;
  /** The broker's value for credential_ref: `client_id:client_secret` (split at the first colon). */
  readonly client: SecretValue;
  readonly egress: EgressPolicy;
  readonly now: () => Date;
  readonly timeoutMs: number;
  readonly maxLineBytes: number;
  readonly onReveal: (value: string) => void;
}

const AUTH_REJECTIONS = new Set(['invalid_client', 'unauthorized_client', 'invalid_grant', 'invalid_scope']);

/** RFC 6749 §2.3.1: each part form-encoded before the Basic encoding. */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}

/**
 * § Authentication, oauth2_client: the client-credentials grant against the configured token
 * endpoint, dialled through the egress policy like the server itself (resolve once, connect to
 * the checked address, no redirects). Client authentication is client_secret_basic. The client
 * secret is revealed only to build that Authorization header. No refresh token is asked for or
 * kept. invalid_client (or any 401) is McpAuthError tool.auth_failed; anything else that is not
 * a token is a retryable `mcp.oauth.exchange_failed`.
 */
export async function exchangeClientCredentials(request: ClientCredentialsRequest): Promise<AccessToken> {
  const decision = await request.egress.check(request.tokenEndpoint);
  if (!decision.allowed) throw new McpAuthError('tool.auth_failed', `The egress policy refused the token endpoint (${decision.code}).`);

  const http = new PinnedHttpClient(decision, { maxLineBytes: request.maxLineBytes });
  try {
    const body = new URLSearchParams({ grant_type: 'client_credentials' });
    if (request.scopes !== null && request.scopes.length > 0) body.set('scope', request.scopes.join(' '));
    const response = await http.fetch(decision.url, {
      method: 'POST',
      headers: { accept: 'application/json', authorization: basicAuthorization(request.client, request.onReveal) },
      body,
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    let document: unknown = null;
    try {
      document = await response.json();
    } catch {
      document = null;
    }
    const fields = typeof document === 'object' && document !== null ? (document as Record<string, unknown>) : {};
    if (response.status === 401 || (response.status === 400 && typeof fields['error'] === 'string' && AUTH_REJECTIONS.has(fields['error']))) {
      // error_description is the endpoint's text: external, so it is not carried.
      throw new McpAuthError('tool.auth_failed', 'The token endpoint rejected the client credentials.');
    }
    const token = fields['access_token'];
    const type = fields['token_type'];
    if (!response.ok || typeof token !== 'string' || token === '' || (type !== undefined && (typeof type !== 'string' || type.toLowerCase() !== 'bearer'))) {
      throw new McpAdapterError('mcp.oauth.exchange_failed', 'The token endpoint did not return a bearer access token.', { retryable: true });
    }
    request.onReveal(token);
    const expiresIn = fields['expires_in'];
    const seconds = typeof expiresIn === 'number' ? expiresIn : typeof expiresIn === 'string' && /^\d+$/.test(expiresIn) ? Number(expiresIn) : null;
    return { value: token, expiresAt: seconds === null ? null : new Date(request.now().getTime() + seconds * 1000) };
  } finally {
    http.close();
  }
}

function basicAuthorization(client: SecretValue, onReveal: (value: string) => void): string {
  const pair = client.reveal();
  const colon = pair.indexOf(':');
  if (colon <= 0 || colon === pair.length - 1) {
    throw new McpAuthError('tool.auth_failed', 'The credential for oauth2_client must resolve to client_id:client_secret.');
  }
  const secret = pair.slice(colon + 1);
  onReveal(secret);
  return `Basic ${Buffer.from(`${formEncode(pair.slice(0, colon))}:${formEncode(secret)}`, 'utf8').toString('base64')}`;
}
