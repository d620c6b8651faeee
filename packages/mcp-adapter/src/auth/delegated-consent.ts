import type { SecretRedactor } from '@veetbot/domain';
import type { EgressPolicy, McpDelegatedTokenStore, McpGrantOwner } from '@veetbot/ports';
import { type DelegatedFlowSnapshot, McpAuthorizationError } from '../errors';
import { loadMcpSdk } from '../sdk';
import { authorizationFailure, checkingTokenResponses } from './delegated-fetch';
import { DelegatedGrant } from './delegated-grant';
import { createOAuthFetch, OAUTH_MAX_RESPONSE_BYTES } from './oauth-fetch';

export interface CompleteDelegatedConsentOptions {
  readonly owner: McpGrantOwner;
  readonly flow: DelegatedFlowSnapshot;
  /** The state the callback carried, already matched to this consent by its hash. */
  readonly state: string;
  /** The full callback URL the authorization server redirected the browser to. */
  readonly callbackUrl: string;
  readonly tokens: McpDelegatedTokenStore;
  readonly egress: EgressPolicy;
  readonly redactor: SecretRedactor;
  /** Default OAUTH_MAX_RESPONSE_BYTES, the bound a connection's own flow reads under. */
  readonly maxResponseBytes?: number;
  readonly timeoutMs: number;
}

/**
 * docs/adr/0082: the api's callback finishes a flow the worker's connection started — ADR 0077's
 * grant restored from the sealed snapshot, the authorization response checked (redirect URI,
 * state, `error`, code), the code exchanged through the SDK's `auth()` with the same
 * egress-checked, bounded fetch and token-response check, and the tokens saved through the
 * platform's (sealed) store for the recorded owner. Refusals keep ADR 0077's `mcp.auth.*` codes;
 * a code the authorization server refuses (injected, stale, already redeemed) is
 * `mcp.auth.flow_failed`.
 */
export async function completeDelegatedConsent(options: CompleteDelegatedConsentOptions): Promise<void> {
  const grant = new DelegatedGrant({
    owner: options.owner,
    port: {
      redirectUri: options.flow.redirectUri,
      clientName: 'veetbot',
      tokens: options.tokens,
      // The exchange never sends anyone anywhere: a flow that asks again is refused.
      userAgent: {
        authorize: async () => {
          throw new McpAuthorizationError('mcp.auth.flow_failed', 'The consent callback cannot start another authorization.');
        },
      },
    },
    egress: options.egress,
    redactor: options.redactor,
    preRegistered: null,
    signal: () => undefined,
  });
  grant.restore(options.flow, options.state);
  grant.acceptCallback(options.callbackUrl);
  const callback = grant.takeCallback();
  const sdk = await loadMcpSdk();
  const fetchFn = checkingTokenResponses(
    createOAuthFetch({
      egress: options.egress,
      maxResponseBytes: options.maxResponseBytes ?? OAUTH_MAX_RESPONSE_BYTES,
      timeoutMs: options.timeoutMs,
    }),
    options.redactor,
  );
  try {
    const result = await sdk.auth(grant, {
      serverUrl: new URL(options.flow.serverUrl),
      ...(options.flow.resourceMetadataUrl === null ? {} : { resourceMetadataUrl: new URL(options.flow.resourceMetadataUrl) }),
      ...(options.flow.scope === null ? {} : { scope: options.flow.scope }),
      fetchFn,
      authorizationCode: callback.code,
      ...(callback.iss === undefined ? {} : { iss: callback.iss }),
    });
    if (result !== 'AUTHORIZED') throw new McpAuthorizationError('mcp.auth.flow_failed', 'The authorization flow did not complete.');
  } catch (error) {
    throw authorizationFailure(error, sdk);
  }
  if (grant.accessToken() === undefined)
    throw new McpAuthorizationError('mcp.auth.flow_failed', 'The authorization flow did not complete.');
}
