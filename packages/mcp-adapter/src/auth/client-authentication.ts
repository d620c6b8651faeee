import { McpAuthorizationError } from '../errors';

/**
 * What a token request's client authentication adds (RFC 6749 §2.3.1, RFC 7523 §2.2): header
 * fields and form fields. Built by CredentialState, the one place a secret is revealed
 * (§ Authentication; docs/adr/0083), at the moment of the request; applied by whoever sends it.
 */
export interface ClientAuthentication {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Readonly<Record<string, string>>;
}

/** The two ways a client with a secret authenticates at a token endpoint. */
export type SecretAuthMethod = 'client_secret_basic' | 'client_secret_post';

/** At most this many methods are read from `token_endpoint_auth_methods_supported` (a hostile document's list is bounded). */
export const MAX_AUTH_METHODS_READ = 32;

/**
 * docs/adr/0083: how a pre-registered client with a secret authenticates at the authorization
 * server's token endpoint, from the operator's `token_endpoint_auth_method` (if any) and the
 * server's `token_endpoint_auth_methods_supported` (RFC 8414 §2: absent means
 * client_secret_basic). The operator's choice is kept when the server offers it (or says
 * nothing); otherwise client_secret_basic is preferred (the secret in a header), then
 * client_secret_post. A server that offers neither for a configured secret is refused
 * (`mcp.auth.client_auth_unsupported`): the secret is never sent in a form it did not ask for,
 * and never dropped to present the client as public.
 */
export function chooseSecretAuthMethod(configured: SecretAuthMethod | undefined, supported: unknown): SecretAuthMethod {
  const offered = Array.isArray(supported)
    ? supported.slice(0, MAX_AUTH_METHODS_READ).filter((method): method is string => typeof method === 'string')
    : [];
  if (offered.length === 0) return configured ?? 'client_secret_basic';
  if (configured !== undefined) {
    if (offered.includes(configured)) return configured;
    throw new McpAuthorizationError(
      'mcp.auth.client_auth_unsupported',
      `The authorization server does not offer the configured token_endpoint_auth_method ${configured}.`,
    );
  }
  if (offered.includes('client_secret_basic')) return 'client_secret_basic';
  if (offered.includes('client_secret_post')) return 'client_secret_post';
  throw new McpAuthorizationError(
    'mcp.auth.client_auth_unsupported',
    'The authorization server offers no client authentication method for a client with a secret (client_secret_basic or client_secret_post).',
  );
}

/** RFC 6749 §2.3.1: each part form-encoded before the Basic encoding. */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}

/** RFC 6749 §2.3.1's client_secret_basic header value. */
export function basicCredentials(clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`, 'utf8').toString('base64')}`;
}

/** Applies one client authentication to a token request the SDK is about to send. */
export function applyClientAuthentication(auth: ClientAuthentication, headers: Headers, params: URLSearchParams): void {
  for (const [name, value] of Object.entries(auth.headers)) headers.set(name, value);
  for (const [name, value] of Object.entries(auth.body)) params.set(name, value);
}
