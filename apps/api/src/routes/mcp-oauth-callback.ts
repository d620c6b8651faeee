import { MCP_OAUTH_CALLBACK_PATH, openPendingConsentFlow, stateHash } from '@veetbot/composition';
import { SealedMcpTokenStore } from '@veetbot/credential-broker';
import { SecretRedactor, VeetbotError } from '@veetbot/domain';
import { completeDelegatedConsent } from '@veetbot/mcp-adapter';
import { ApiError } from '../api-error';
import type { ApiDeps } from '../deps';
import type { RouteTable } from '../routing';
import { requeueStep } from '../step-requeue';

/** A state is 43 characters from our flows; anything past this is not one of ours. */
const STATE_MAX_CHARS = 512;
/** The token request's deadline (the response's bound is the adapter's own, ADR 0077). */
const OAUTH_TIMEOUT_MS = 10_000;

const mismatch = () =>
  new ApiError(400, 'mcp.auth.state_mismatch', 'The authorization response carries no state this platform is waiting for.');
const replayed = () => new ApiError(409, 'mcp.auth.state_replayed', 'This authorization response was already used.');

/** The flow's refusals keep their mcp.auth.* codes; what the authorization server refused is a bad gateway. */
function exchangeFailure(error: unknown): ApiError {
  if (!VeetbotError.isInstance(error)) return new ApiError(502, 'mcp.auth.flow_failed', 'The authorization could not be completed.');
  const status = error.code === 'mcp.auth.flow_failed' || error.code === 'mcp.auth.token_response_invalid' ? 502 : 400;
  // The adapter's messages are its own (never a server's text); no cause is carried.
  return new ApiError(status, error.code.startsWith('mcp.') ? error.code : 'mcp.auth.flow_failed', error.message);
}

/**
 * docs/adr/0082: the redirect URI of consent as a run suspension. No API key: the state binds
 * the request to one pending consent (tenant, principal, run, server), found by its SHA-256.
 * Refused in order — unknown or expired (`mcp.auth.state_mismatch`), used
 * (`mcp.auth.state_replayed`), another issuer (`mcp.auth.issuer_mismatch`, RFC 9207) — then the
 * consent is used up in one conditional update before the code is exchanged (two racing
 * callbacks exchange at most once), the tokens are saved sealed for the recorded principal, and
 * the suspended call's step goes back to the queue: the worker re-claims the call and runs it
 * with the bearer.
 */
export function mcpOAuthCallbackRoutes(routes: RouteTable, deps: ApiDeps): void {
  routes.add(
    {
      method: 'get',
      path: MCP_OAUTH_CALLBACK_PATH,
      operationId: 'completeMcpAuthorization',
      summary:
        "The authorization server's redirect back after a person consented for a suspended MCP call: the code is exchanged, the grant saved sealed, the call resumed.",
      tag: 'mcp',
      auth: false,
      responses: { 200: { description: 'Authorized: the suspended call runs again.' } },
    },
    async (c) => {
      const url = new URL(c.req.url);
      const states = url.searchParams.getAll('state');
      const state = states[0];
      if (states.length !== 1 || state === undefined || state === '' || state.length > STATE_MAX_CHARS) throw mismatch();
      const stores = deps.stores;
      const found = await stores.mcpPendingConsents.findByStateHash(stateHash(state));
      if (found === null) throw mismatch();
      const row = await stores.mcpPendingConsents.get(found.tenantId, found.id);
      if (row === null) throw mismatch();
      if (row.usedAt !== null) throw replayed();
      const now = deps.clock.now();
      if (now.getTime() >= row.expiresAt.getTime()) throw mismatch();
      const iss = url.searchParams.getAll('iss');
      if (iss.length > 1 || (iss.length === 1 && iss[0] !== row.issuer))
        throw new ApiError(400, 'mcp.auth.issuer_mismatch', 'The authorization response names another issuer.');
      if (!(await stores.mcpPendingConsents.markUsed(row.tenantId, row.id, now))) throw replayed();
      let flow: ReturnType<typeof openPendingConsentFlow>;
      try {
        flow = openPendingConsentFlow(deps.secretKeyring, row);
      } catch {
        // Altered, moved, or sealed by a key this process no longer holds: the consent is spent.
        throw new ApiError(500, 'credential.secret_unreadable', 'The pending consent could not be opened.');
      }
      try {
        await completeDelegatedConsent({
          owner: { tenantId: row.tenantId, principalId: row.principalId, serverId: row.serverId },
          flow,
          state,
          // The redirect URI as registered (this process may see another host), with the response's query.
          callbackUrl: `${flow.redirectUri}${url.search}`,
          tokens: new SealedMcpTokenStore(stores.mcpDelegatedGrants, deps.secretKeyring, deps.clock),
          egress: deps.egress,
          redactor: new SecretRedactor(),
          timeoutMs: OAUTH_TIMEOUT_MS,
        });
      } catch (error) {
        throw exchangeFailure(error);
      }
      await resume(deps, row.tenantId, row.invocationId, row.id);
      return c.json({ status: 'authorized', run_id: row.runId, server_id: row.serverId }, 200);
    },
  );
}

/**
 * The suspended call runs again the approvals' way (docs/adr/0039): its step goes back to the
 * queue, a worker resubmits it, step 8 finds the consent used and step 9 re-claims the row.
 */
async function resume(deps: ApiDeps, tenantId: string, invocationId: string, consentId: string): Promise<void> {
  const invocation = await deps.stores.invocations.getById(tenantId, invocationId);
  if (invocation === null || invocation.suspendedKind !== 'authorization' || invocation.suspendedRef !== consentId) return;
  await requeueStep(deps, tenantId, invocation.runId, invocation.stepNumber);
}
