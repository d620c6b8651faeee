import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type {
  AddClientAuthentication,
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  OAuthTokens,
} from '@modelcontextprotocol/client';
import type { SecretRedactor } from '@veetbot/domain';
import type { EgressPolicy, McpDelegatedAuthorization, McpGrantOwner } from '@veetbot/ports';
import { type DelegatedFlowSnapshot, McpAuthorizationError, McpConsentRequiredError } from '../errors';
import { hostOf } from '../egress/default-egress-policy';
import { applyClientAuthentication, type ClientAuthentication } from './client-authentication';

/**
 * A pre-registered client (operator configuration, docs/adr/0077). Its secret, if it has one,
 * never reaches this object: `authenticate` builds each token request's client authentication
 * at the connection's credential (docs/adr/0083), from the server's supported methods.
 */
export interface PreRegisteredClient {
  readonly clientId: string;
  readonly tokenEndpointAuthMethod?: string;
  readonly authenticate?: (supportedMethods: unknown) => ClientAuthentication;
}

export interface DelegatedGrantOptions {
  readonly owner: McpGrantOwner;
  readonly port: McpDelegatedAuthorization;
  readonly egress: EgressPolicy;
  readonly redactor: SecretRedactor;
  readonly preRegistered: PreRegisteredClient | null;
  /** Aborts the user agent's wait (the handshake's deadline or the owner's stop). */
  readonly signal: () => AbortSignal | undefined;
}

/** The callback of the one outstanding authorization request, once it came back and matched. */
interface Callback {
  readonly code: string;
  readonly iss: string | undefined;
}

/** 32 random bytes, base64url: a state and nothing else can guess it (RFC 6749 §10.12). */
function randomState(): string {
  return randomBytes(32).toString('base64url');
}

function isLoopbackHost(url: URL): boolean {
  const host = hostOf(url);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/**
 * docs/adr/0077: one connection's delegated grant, as the SDK's OAuthClientProvider — the
 * SDK's `auth()` does discovery (RFC 9728, RFC 8414 with the OpenID fallback), scope selection,
 * registration (CIMD, RFC 7591, or this pre-registered client), PKCE S256, RFC 8707 resource
 * indicators, the RFC 8414 §3.3 and RFC 9207 issuer checks and refresh; this object holds what
 * it produces and adds what is the platform's: a single-use `state` bound to this owner and flow,
 * the authorization URL checked before anyone is sent to it, the callback checked before its
 * code is used, and tokens kept in the platform's store (sealed) or in this object only, taught
 * to the connection's redactor the moment they arrive.
 */
export class DelegatedGrant implements OAuthClientProvider {
  readonly #options: DelegatedGrantOptions;
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier: string | undefined;
  #discovery: OAuthDiscoveryState | undefined;
  /** The state of the one outstanding request; cleared when its callback is taken (single use). */
  #pendingState: string | null = null;
  #callback: Callback | null = null;
  /** The request the flow is for (DelegatedFetch notes it): what a consent's snapshot carries. */
  #request: { serverUrl: string; resourceMetadataUrl: string | null; scope: string | null } | null = null;
  /** The CIMD URL used as client_id where the server supports it (set only when configured). */
  readonly clientMetadataUrl?: string;
  /**
   * Set only for a pre-registered client with a secret (docs/adr/0083): the SDK then adds no
   * client authentication of its own to a token request and calls this instead.
   */
  readonly addClientAuthentication?: AddClientAuthentication;

  constructor(options: DelegatedGrantOptions) {
    this.#options = options;
    if (options.port.clientMetadataUrl !== undefined) this.clientMetadataUrl = options.port.clientMetadataUrl;
    const pre = options.preRegistered;
    if (pre !== null) {
      this.#client = {
        client_id: pre.clientId,
        ...(pre.tokenEndpointAuthMethod === undefined ? {} : { token_endpoint_auth_method: pre.tokenEndpointAuthMethod }),
      } as OAuthClientInformationMixed;
      const authenticate = pre.authenticate;
      if (authenticate !== undefined) {
        this.addClientAuthentication = (headers, params, _url, metadata) =>
          applyClientAuthentication(authenticate(metadata?.token_endpoint_auth_methods_supported), headers, params);
      }
    }
  }

  get owner(): McpGrantOwner {
    return this.#options.owner;
  }

  get redirectUrl(): string {
    return this.#options.port.redirectUri;
  }

  get clientMetadata(): OAuthClientMetadata {
    // refresh_token: a grant outlives its connection, so the platform asks for one (SEP-2207:
    // with offline_access where the authorization server offers it).
    return {
      client_name: this.#options.port.clientName,
      redirect_uris: [this.#options.port.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
    };
  }

  /** The platform's stored grant for this owner, if any (connect time). */
  async load(): Promise<void> {
    const stored = await this.#options.port.tokens?.load(this.#options.owner);
    if (stored === null || stored === undefined) return;
    this.#learn(stored.accessToken, stored.refreshToken);
    this.#tokens = {
      access_token: stored.accessToken,
      token_type: stored.tokenType,
      ...(stored.refreshToken === null ? {} : { refresh_token: stored.refreshToken }),
      ...(stored.scope === null ? {} : { scope: stored.scope }),
      ...(stored.expiresAt === null ? {} : { expires_in: Math.max(0, Math.floor((stored.expiresAt.getTime() - Date.now()) / 1000)) }),
      issuer: stored.issuer,
    } as OAuthTokens;
  }

  /** The resource, resource metadata and scope the current flow authorizes (docs/adr/0082). */
  noteRequest(request: { serverUrl: string; resourceMetadataUrl: string | null; scope: string | null }): void {
    this.#request = request;
  }

  /**
   * docs/adr/0082: the api's callback finishes a flow another process started — the client,
   * verifier and discovery from its snapshot, and the one outstanding state the callback's
   * lookup already matched by hash.
   */
  restore(snapshot: DelegatedFlowSnapshot, state: string): void {
    this.#client = snapshot.clientInformation as OAuthClientInformationMixed;
    this.saveCodeVerifier(snapshot.codeVerifier);
    this.#discovery = (snapshot.discoveryState ?? undefined) as OAuthDiscoveryState | undefined;
    this.#request = { serverUrl: snapshot.serverUrl, resourceMetadataUrl: snapshot.resourceMetadataUrl, scope: snapshot.scope };
    this.#pendingState = state;
    this.#callback = null;
  }

  /** What the code exchange needs, for a consent another process completes; null when incomplete. */
  #snapshot(): DelegatedFlowSnapshot | null {
    const request = this.#request;
    if (request === null || this.#verifier === undefined || this.#client === undefined) return null;
    const discovery = this.#discovery as (OAuthDiscoveryState & Record<string, unknown>) | undefined;
    const metadata = discovery?.authorizationServerMetadata as { issuer?: unknown } | undefined;
    const issuer =
      typeof metadata?.issuer === 'string'
        ? metadata.issuer
        : typeof discovery?.authorizationServerUrl === 'string'
          ? discovery.authorizationServerUrl
          : null;
    if (issuer === null) return null;
    return {
      ...request,
      redirectUri: this.redirectUrl,
      codeVerifier: this.#verifier,
      clientInformation: { ...this.#client } as Record<string, unknown>,
      discoveryState: discovery === undefined ? null : { ...discovery },
      issuer,
    };
  }

  /** The access token to present now, if there is one. */
  accessToken(): string | undefined {
    return this.#tokens?.access_token;
  }

  state(): string {
    const state = randomState();
    this.#pendingState = state;
    this.#callback = null;
    return state;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#client;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    const secret = (info as { client_secret?: unknown }).client_secret;
    if (typeof secret === 'string' && secret !== '') this.#options.redactor.add(secret);
    this.#client = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    // A refresh that returns no new refresh token keeps the old one (RFC 6749 §6); one that
    // returns a new one replaces it (rotation).
    const refresh = tokens.refresh_token ?? this.#tokens?.refresh_token ?? null;
    this.#learn(tokens.access_token, refresh);
    this.#tokens = refresh === null ? tokens : { ...tokens, refresh_token: refresh };
    const issuer = (tokens as { issuer?: unknown }).issuer;
    await this.#options.port.tokens?.save(this.#options.owner, {
      accessToken: tokens.access_token,
      refreshToken: refresh,
      tokenType: tokens.token_type,
      expiresAt: typeof tokens.expires_in === 'number' ? new Date(Date.now() + tokens.expires_in * 1000) : null,
      scope: tokens.scope ?? null,
      issuer: typeof issuer === 'string' ? issuer : '',
    });
  }

  saveCodeVerifier(verifier: string): void {
    this.#options.redactor.add(verifier);
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    if (this.#verifier === undefined) throw new McpAuthorizationError('mcp.auth.flow_failed', 'No authorization request is outstanding.');
    return this.#verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#discovery;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'tokens') this.#tokens = undefined;
    if ((scope === 'all' || scope === 'client') && this.#options.preRegistered === null) this.#client = undefined;
    if (scope === 'all' || scope === 'verifier') this.#verifier = undefined;
    if (scope === 'all' || scope === 'discovery') this.#discovery = undefined;
  }

  /**
   * The SDK built the authorization URL: check it, then hand it to the platform's user agent
   * with its bound state. The endpoint must be https (a loopback host is the one exemption, and
   * only where the egress policy admits loopback); it must pass the egress policy like every
   * URL of the flow, since the check-mode user agent dials it and a browser would.
   */
  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (authorizationUrl.protocol !== 'https:' && !(authorizationUrl.protocol === 'http:' && isLoopbackHost(authorizationUrl))) {
      throw new McpAuthorizationError('mcp.auth.insecure_endpoint', 'The authorization endpoint is not https.');
    }
    const decision = await this.#options.egress.check(authorizationUrl.href);
    if (!decision.allowed) {
      throw new McpAuthorizationError(
        'mcp.auth.endpoint_refused',
        `The egress policy refused the authorization endpoint (${decision.code}).`,
      );
    }
    const state = this.#pendingState;
    if (state === null) throw new McpAuthorizationError('mcp.auth.flow_failed', 'The authorization request carries no state.');
    const href = authorizationUrl.href;
    const outcome = await this.#options.port.userAgent.authorize(
      { owner: this.#options.owner, authorizationUrl: href, redirectUri: this.redirectUrl, state },
      this.#options.signal() ?? new AbortController().signal,
    );
    if (outcome.kind === 'consent_needed') throw new McpConsentRequiredError(href, state, this.#snapshot());
    this.acceptCallback(outcome.callbackUrl);
  }

  /**
   * The authorization response (RFC 6749 §4.1.2): a redirect to our redirect URI carrying the
   * code and exactly the outstanding state, which is used up here — a replayed response, or a
   * code injected with another flow's state, finds no outstanding state and is refused.
   */
  acceptCallback(callbackUrl: string): void {
    let url: URL;
    try {
      url = new URL(callbackUrl);
    } catch {
      throw new McpAuthorizationError('mcp.auth.authorization_refused', 'The authorization response is not a URL.');
    }
    const expected = new URL(this.redirectUrl);
    if (url.origin !== expected.origin || url.pathname !== expected.pathname) {
      throw new McpAuthorizationError('mcp.auth.authorization_refused', 'The authorization response did not return to the redirect URI.');
    }
    const state = url.searchParams.get('state');
    const pending = this.#pendingState;
    if (pending === null || state === null || state !== pending) {
      throw new McpAuthorizationError(
        'mcp.auth.state_mismatch',
        'The authorization response carries a state that is not the outstanding one.',
      );
    }
    this.#pendingState = null;
    if (url.searchParams.has('error')) {
      throw new McpAuthorizationError('mcp.auth.authorization_refused', 'The authorization server refused the request.');
    }
    const code = url.searchParams.get('code');
    if (code === null || code === '')
      throw new McpAuthorizationError('mcp.auth.authorization_refused', 'The authorization response carries no code.');
    this.#options.redactor.add(code);
    this.#callback = { code, iss: url.searchParams.get('iss') ?? undefined };
  }

  /** The callback's code and iss, once: the exchange takes them. */
  takeCallback(): Callback {
    const callback = this.#callback;
    this.#callback = null;
    if (callback === null) throw new McpAuthorizationError('mcp.auth.flow_failed', 'No authorization response arrived.');
    return callback;
  }

  #learn(access: string, refresh: string | null): void {
    this.#options.redactor.add(access);
    if (refresh !== null) this.#options.redactor.add(refresh);
  }
}
