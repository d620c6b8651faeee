import type { McpAuthorizationUserAgent } from '@veetbot/ports';
import { McpAuthorizationError } from '../errors';
import { createOAuthFetch, OAUTH_MAX_REDIRECTS, type OAuthFetchOptions } from './oauth-fetch';

/**
 * `veetbot mcp check --oauth-authorize auto-approve` only (docs/adr/0077): the authorization user
 * agent of a test against an authorization server that approves without a person (the
 * conformance suite's). It requests the authorization URL through the egress-checked fetch and
 * follows its redirects — each hop re-checked — until one points at the redirect URI, which it
 * returns as the callback without dialling it. Nothing else uses it: the platform's user agent
 * is a person's browser (issue 28 item 4).
 */
export function autoApprovingUserAgent(options: OAuthFetchOptions): McpAuthorizationUserAgent {
  const fetchFn = createOAuthFetch(options);
  return {
    async authorize(request, signal) {
      const redirect = new URL(request.redirectUri);
      let url = request.authorizationUrl;
      for (let hop = 0; hop <= OAUTH_MAX_REDIRECTS; hop++) {
        const response = await fetchFn(url, { redirect: 'manual', signal, headers: { accept: 'text/html' } });
        const location = response.headers.get('location');
        await response.body?.cancel().catch(() => undefined);
        if (response.status < 300 || response.status >= 400 || location === null) break;
        let target: URL;
        try {
          target = new URL(location, url);
        } catch {
          break;
        }
        if (target.origin === redirect.origin && target.pathname === redirect.pathname)
          return { kind: 'callback', callbackUrl: target.href };
        url = target.href;
      }
      throw new McpAuthorizationError(
        'mcp.auth.authorization_refused',
        'The authorization server did not redirect back to the redirect URI.',
      );
    },
  };
}
