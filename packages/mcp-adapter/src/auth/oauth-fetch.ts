import type { EgressPolicy } from '@veetbot/ports';
import { EgressRefusedError, McpAuthorizationError } from '../errors';
import { PinnedHttpClient, type FetchLike } from '../egress/pinned-fetch';

/** Redirects one authorization request may follow, each re-checked (docs/adr/0077). */
export const OAUTH_MAX_REDIRECTS = 3;
/** The largest metadata, registration or token response the authorization flow reads. */
export const OAUTH_MAX_RESPONSE_BYTES = 256 * 1024;

export interface OAuthFetchOptions {
  readonly egress: EgressPolicy;
  /** The largest response body (a metadata document, a registration, a token response). */
  readonly maxResponseBytes: number;
  /** Each request's own deadline (a hostile server that never answers). */
  readonly timeoutMs: number;
}

const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * docs/adr/0077: the one fetch every URL of the authorization flow is dialled through — the
 * protected resource metadata, the authorization server metadata, registration, token and
 * (in `mcp check`) the authorization URL. Each request, and each redirect hop, is checked by the
 * tenant's egress policy and connected to exactly the address checked (PinnedHttpClient), so a
 * metadata document that names 169.254.169.254 or a private address is refused like a tenant
 * URL (RULINGS.md "Egress"). A GET follows at most OAUTH_MAX_REDIRECTS redirects, every target
 * re-checked; a POST never follows one; `redirect: 'manual'` hands the 3xx back (the SDK's own
 * same-origin following, and the check-mode user agent reading the callback). The body is read
 * whole, at most maxResponseBytes (ResponseTooLargeError past it), before the response is
 * returned, so nothing unbounded reaches the SDK's JSON parsing.
 */
export function createOAuthFetch(options: OAuthFetchOptions): FetchLike {
  return async (input, init = {}) => {
    const method = (init.method ?? 'GET').toUpperCase();
    let url = String(input);
    for (let hop = 0; ; hop++) {
      const decision = await options.egress.check(url);
      if (!decision.allowed) {
        throw new McpAuthorizationError(
          'mcp.auth.endpoint_refused',
          `The egress policy refused a URL of the authorization flow (${decision.code}).`,
          new EgressRefusedError(decision.code, decision.message),
        );
      }
      const client = new PinnedHttpClient(decision, { maxLineBytes: options.maxResponseBytes, passRedirects: true });
      try {
        const timeout = AbortSignal.timeout(options.timeoutMs);
        const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
        const response = await client.fetch(decision.url.href, { ...init, signal });
        if (response.status >= 300 && response.status < 400) {
          if (init.redirect === 'manual') return response;
          const location = response.headers.get('location');
          if (method !== 'GET' || location === null || hop >= OAUTH_MAX_REDIRECTS) {
            throw new McpAuthorizationError('mcp.auth.endpoint_refused', 'A redirect of the authorization flow was refused.');
          }
          try {
            url = new URL(location, decision.url).href;
          } catch {
            throw new McpAuthorizationError('mcp.auth.endpoint_refused', 'A redirect of the authorization flow was refused.');
          }
          continue;
        }
        const body = NULL_BODY_STATUSES.has(response.status) ? null : await response.arrayBuffer();
        return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
      } finally {
        client.close();
      }
    }
  };
}
