import { VeetbotError, type SecretRedactor } from '@veetbot/domain';
import { McpAuthorizationError } from '../errors';
import type { FetchLike } from '../egress/pinned-fetch';
import { loadMcpSdk, type McpSdk } from '../sdk';
import type { DelegatedGrant } from './delegated-grant';

/**
 * Step-up authorizations one request may take on `403 insufficient_scope` before it fails
 * `mcp.auth.step_up_exhausted` (MCP authorization, "Scope challenge handling": a retry limit;
 * with the first authorization, at most three authorization requests).
 */
export const STEP_UP_MAX_ATTEMPTS = 2;

function isInsufficientScope(response: Response): boolean {
  return response.status === 403 && /error\s*=\s*"?insufficient_scope"?/i.test(response.headers.get('www-authenticate') ?? '');
}

/**
 * A form body with a grant_type is a token request: its answer must be a bearer access token,
 * refused `mcp.auth.token_response_invalid` otherwise (before the SDK stores anything), and the
 * tokens are taught to the redactor before anything else sees them.
 */
export function checkingTokenResponses(fetchFn: FetchLike, redactor: SecretRedactor): FetchLike {
  return async (input, init) => {
    const response = await fetchFn(input, init);
    const body = init?.body;
    const form =
      body instanceof URLSearchParams ? body : typeof body === 'string' && !body.startsWith('{') ? new URLSearchParams(body) : null;
    if (form === null || !form.has('grant_type') || !response.ok) return response;
    const text = await response.text();
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      document = null;
    }
    const fields = typeof document === 'object' && document !== null ? (document as Record<string, unknown>) : {};
    const access = fields.access_token;
    const type = fields.token_type;
    if (typeof access !== 'string' || access === '' || typeof type !== 'string' || !['bearer'].includes(type.toLowerCase())) {
      throw new McpAuthorizationError('mcp.auth.token_response_invalid', 'The token endpoint did not return a bearer access token.');
    }
    redactor.add(access);
    if (typeof fields.refresh_token === 'string' && fields.refresh_token !== '') redactor.add(fields.refresh_token);
    return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/**
 * The SDK's flow failures as the adapter's codes (docs/adr/0077). Nothing of the SDK's message
 * is carried (it may quote a server), and no cause: it may hold a server's body.
 */
export function authorizationFailure(error: unknown, sdk: McpSdk): VeetbotError {
  if (VeetbotError.isInstance(error)) return error;
  if (error instanceof sdk.IssuerMismatchError || error instanceof sdk.AuthorizationServerMismatchError)
    return new McpAuthorizationError(
      'mcp.auth.issuer_mismatch',
      'The authorization server is not the issuer its metadata or response named.',
    );
  if (error instanceof sdk.InsecureTokenEndpointError)
    return new McpAuthorizationError('mcp.auth.insecure_endpoint', 'The token endpoint is not https.');
  if (error instanceof Error && /^Protected resource .* does not match/.test(error.message))
    return new McpAuthorizationError('mcp.auth.resource_mismatch', 'The protected resource metadata names another resource.');
  return new McpAuthorizationError('mcp.auth.flow_failed', 'The authorization flow could not be completed.');
}

/**
 * docs/adr/0077: the MCP server's fetch, authorized. Each request carries the grant's access
 * token; a 401 runs the authorization flow once (refresh, or a new authorization through the
 * user agent), a `403 insufficient_scope` runs it again for the union of the scopes asked so
 * far, at most STEP_UP_MAX_ATTEMPTS times; then the request is sent again. One flow at a time
 * per connection: a request that meets a 401 while a flow runs waits for it. Every URL of the
 * flow goes through `oauthFetch` (egress-checked, pinned, bounded).
 */
export class DelegatedFetch {
  readonly #grant: DelegatedGrant;
  readonly #serverUrl: URL;
  readonly #oauthFetch: FetchLike;
  #flow: Promise<void> | null = null;
  #scope: string | undefined;

  constructor(grant: DelegatedGrant, serverUrl: URL, oauthFetch: FetchLike, redactor: SecretRedactor) {
    this.#grant = grant;
    this.#serverUrl = serverUrl;
    this.#oauthFetch = checkingTokenResponses(oauthFetch, redactor);
  }

  wrap(next: FetchLike): FetchLike {
    return async (input, init) => {
      const send = (): Promise<Response> => {
        const headers = new Headers(init?.headers);
        const token = this.#grant.accessToken();
        if (token !== undefined) headers.set('authorization', `Bearer ${token}`);
        return next(input, { ...init, headers });
      };
      let response = await send();
      let authorizedOn401 = false;
      let stepUps = 0;
      for (;;) {
        if (response.status === 401 && !authorizedOn401) {
          authorizedOn401 = true;
        } else if (isInsufficientScope(response)) {
          if (stepUps >= STEP_UP_MAX_ATTEMPTS) {
            await response.body?.cancel().catch(() => undefined);
            throw new McpAuthorizationError(
              'mcp.auth.step_up_exhausted',
              'The server kept asking for more scope after step-up authorization.',
            );
          }
          stepUps++;
        } else {
          return response;
        }
        const challenge = response;
        await challenge.body?.cancel().catch(() => undefined);
        await this.#authorize(challenge, challenge.status === 403);
        response = await send();
      }
    };
  }

  /** One flow at a time: a second challenge during a flow waits for it, then retries. */
  async #authorize(challenge: Response, stepUp: boolean): Promise<void> {
    if (this.#flow !== null) {
      await this.#flow.catch(() => undefined);
      return;
    }
    this.#flow = this.#run(challenge, stepUp).finally(() => {
      this.#flow = null;
    });
    return this.#flow;
  }

  async #run(challenge: Response, stepUp: boolean): Promise<void> {
    const sdk = await loadMcpSdk();
    // A 401 to a token we hold may mean the resource moved to another authorization server
    // (SEP-2352): discover again, so the issuer stamps on the old client and tokens make the SDK
    // register and authorize afresh rather than present them to the new one.
    if (!stepUp && this.#grant.accessToken() !== undefined) this.#grant.invalidateCredentials('discovery');
    const { resourceMetadataUrl, scope } = sdk.extractWWWAuthenticateParams(challenge);
    // Step-up keeps what was granted: the union of the scopes asked so far and the new challenge's.
    this.#scope = stepUp ? sdk.computeScopeUnion(this.#scope, scope) : (scope ?? this.#scope);
    this.#grant.noteRequest({
      serverUrl: this.#serverUrl.href,
      resourceMetadataUrl: resourceMetadataUrl?.href ?? null,
      scope: this.#scope ?? null,
    });
    const options = {
      serverUrl: this.#serverUrl,
      ...(resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl }),
      ...(this.#scope === undefined ? {} : { scope: this.#scope }),
      fetchFn: this.#oauthFetch,
    };
    try {
      let result = await sdk.auth(this.#grant, { ...options, forceReauthorization: stepUp });
      if (result === 'REDIRECT') {
        const callback = this.#grant.takeCallback();
        result = await sdk.auth(this.#grant, {
          ...options,
          authorizationCode: callback.code,
          ...(callback.iss === undefined ? {} : { iss: callback.iss }),
        });
      }
      if (result !== 'AUTHORIZED') throw new McpAuthorizationError('mcp.auth.flow_failed', 'The authorization flow did not complete.');
    } catch (error) {
      throw authorizationFailure(error, sdk);
    }
  }
}
