import type { SecretRedactor } from '@veetbot/domain';
import type { EgressPolicy } from '@veetbot/ports';
import { basicCredentials, type ClientAuthentication } from './client-authentication';
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
  /**
   * The request's client authentication — client_secret_basic's Authorization header, or
   * private_key_jwt's assertion fields — built at request time by the connection's credential
   * (the one place a secret is revealed, § Authentication; docs/adr/0083).
   */
  readonly authenticate: () => ClientAuthentication;
  readonly egress: EgressPolicy;
  readonly now: () => Date;
  readonly timeoutMs: number;
  readonly maxLineBytes: number;
  /** Taught the access token, so a server echoing it back is scrubbed. */
  readonly redactor: SecretRedactor;
}

const AUTH_REJECTIONS = new Set(['invalid_client', 'unauthorized_client', 'invalid_grant', 'invalid_scope']);

/**
 * § Authentication, oauth2_client: the client-credentials grant against the configured token
 * endpoint, dialled through the egress policy like the server itself (resolve once, connect to
 * the checked address, no redirects). Client authentication is client_secret_basic, or
 * private_key_jwt where the operator configured a client assertion (docs/adr/0083); either is
 * built by the connection's credential, the only place its secret is revealed. No refresh token is asked for or
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
    const auth = request.authenticate();
    for (const [name, value] of Object.entries(auth.body)) body.set(name, value);
    const response = await http.fetch(decision.url, {
      method: 'POST',
      headers: { accept: 'application/json', ...auth.headers },
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
    if (response.status === 401 || (response.status === 400 && typeof fields.error === 'string' && AUTH_REJECTIONS.has(fields.error))) {
      // error_description is the endpoint's text: external, so it is not carried.
      throw new McpAuthError('tool.auth_failed', 'The token endpoint rejected the client credentials.');
    }
    const token = fields.access_token;
    const type = fields.token_type;
    if (
      !response.ok ||
      typeof token !== 'string' ||
      token === '' ||
      (type !== undefined && (typeof type !== 'string' || type.toLowerCase() !== 'bearer'))
    ) {
      throw new McpAdapterError('mcp.oauth.exchange_failed', 'The token endpoint did not return a bearer access token.', {
        retryable: true,
      });
    }
    request.redactor.add(token);
    const expiresIn = fields.expires_in;
    const seconds =
      typeof expiresIn === 'number' ? expiresIn : typeof expiresIn === 'string' && /^\d+$/.test(expiresIn) ? Number(expiresIn) : null;
    return { value: token, expiresAt: seconds === null ? null : new Date(request.now().getTime() + seconds * 1000) };
  } finally {
    http.close();
  }
}

/**
 * The header value from the broker's value for credential_ref, `client_id:client_secret` (split
 * at the first colon). The pair is already in the redactor (the secret taught it); the
 * client_secret alone is added too, since an endpoint may echo just that.
 */
export function basicAuthorization(pair: string, redactor: SecretRedactor): string {
  const colon = pair.indexOf(':');
  if (colon <= 0 || colon === pair.length - 1) {
    throw new McpAuthError('tool.auth_failed', 'The credential for oauth2_client must resolve to client_id:client_secret.');
  }
  const secret = pair.slice(colon + 1);
  redactor.add(secret);
  return basicCredentials(pair.slice(0, colon), secret);
}
