/**
 * docs/adr/0077: the MCP authorization specification's authorization code grant, client side —
 * what the adapter needs from the platform to act for a person. The adapter does discovery,
 * registration, PKCE, state, issuer checks and refresh; the platform supplies who the grant is
 * for, where tokens are kept, and who takes the person to the authorization server.
 */

/** Whose grant: tokens are held per (tenant, principal, server) and never cross them. */
export interface McpGrantOwner {
  readonly tenantId: string;
  /** The principal the grant acts for; null until the consent surface binds one (issue 28 item 4). */
  readonly principalId: string | null;
  readonly serverId: string;
}

/** A grant's tokens. Secret: kept sealed by a store, never in a row, event, log, error or span. */
export interface McpDelegatedTokens {
  readonly accessToken: string;
  readonly refreshToken: string | null;
  readonly tokenType: string;
  /** Null when the server gave no expires_in. */
  readonly expiresAt: Date | null;
  readonly scope: string | null;
  /** The authorization server that issued them (SEP-2352: tokens are bound to their issuer). */
  readonly issuer: string;
}

/**
 * Where a grant's tokens live between connections (sealed like tenant secrets). Absent: the
 * connection holds them in memory and they go with it (`mcp check`).
 */
export interface McpDelegatedTokenStore {
  load(owner: McpGrantOwner): Promise<McpDelegatedTokens | null>;
  /** A refresh rotates: the new refresh token replaces the old one. */
  save(owner: McpGrantOwner, tokens: McpDelegatedTokens): Promise<void>;
  revoke(owner: McpGrantOwner): Promise<void>;
}

/** One authorization request: the URL a person's user agent is sent to, and the state bound to it. */
export interface McpAuthorizationRequest {
  readonly owner: McpGrantOwner;
  readonly authorizationUrl: string;
  readonly redirectUri: string;
  /** Single use, bound to this owner and flow; the callback must return exactly it. */
  readonly state: string;
}

export type McpAuthorizationOutcome =
  /** The user agent came back: the full callback URL the authorization server redirected to. */
  | { readonly kind: 'callback'; readonly callbackUrl: string }
  /**
   * A person must consent elsewhere (the run suspends, issue 28 item 4); the adapter ends the
   * connection `tool.auth_unsupported` carrying the link and state.
   */
  | { readonly kind: 'consent_needed' };

/** Who takes the person to the authorization server. */
export interface McpAuthorizationUserAgent {
  authorize(request: McpAuthorizationRequest, signal: AbortSignal): Promise<McpAuthorizationOutcome>;
}

/**
 * The platform's side of delegated authorization. Given to the adapter: a server that answers
 * 401 with RFC 9728 resource metadata is authorized through it; absent, such a server ends
 * `tool.auth_unsupported` as before.
 */
export interface McpDelegatedAuthorization {
  /** The redirect URI registered for the platform (the api's callback; a loopback URL in `mcp check`). */
  readonly redirectUri: string;
  /** The client ID metadata document's https URL (CIMD), where the platform serves one. */
  readonly clientMetadataUrl?: string;
  readonly clientName: string;
  readonly tokens?: McpDelegatedTokenStore;
  readonly userAgent: McpAuthorizationUserAgent;
  /** The principal a tenant's connection acts for (null until item 4 binds one). */
  readonly principalFor?: (tenantId: string) => string | null;
}
