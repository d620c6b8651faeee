import { createHash, randomUUID } from 'node:crypto';
import { CredentialError, openMcpConsentFlow, type SecretKeyring, sealMcpConsentFlow } from '@veetbot/credential-broker';
import { type DelegatedFlowSnapshot, McpConsentRequiredError } from '@veetbot/mcp-adapter';
import type {
  ConsentSuspended,
  ConsentSuspensionCall,
  ConsentSuspensionHost,
  McpPendingConsentRow,
  McpPendingConsentStore,
} from '@veetbot/ports';

/**
 * docs/adr/0082: how long a pending consent's link is good for. A person may be away for a
 * while; an hour bounds what a leaked link is worth.
 */
export const PENDING_CONSENT_TTL_SECONDS = 3600;

/** The callback path on the api; the redirect URI is VEETBOT_PUBLIC_URL + this. */
export const MCP_OAUTH_CALLBACK_PATH = '/v1/mcp/oauth/callback';

/** The SHA-256 of a state: the only form a state is kept in (docs/adr/0082). */
export function stateHash(state: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(state, 'utf8').digest());
}

/** The sealed document's shape, version 1 (what the code exchange needs), checked on open. */
function sealedFlowOf(value: unknown): DelegatedFlowSnapshot | null {
  if (typeof value !== 'object' || value === null) return null;
  const d = value as Record<string, unknown>;
  const text = (v: unknown, max: number): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;
  const textOrNull = (v: unknown, max: number): v is string | null => v === null || text(v, max);
  const record = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (
    d.v !== 1 ||
    !text(d.serverUrl, 2048) ||
    !textOrNull(d.resourceMetadataUrl, 2048) ||
    !textOrNull(d.scope, 4096) ||
    !text(d.redirectUri, 2048) ||
    !text(d.codeVerifier, 128) ||
    !record(d.clientInformation) ||
    !(d.discoveryState === null || record(d.discoveryState)) ||
    !text(d.issuer, 2048)
  )
    return null;
  return {
    serverUrl: d.serverUrl,
    resourceMetadataUrl: d.resourceMetadataUrl,
    scope: d.scope,
    redirectUri: d.redirectUri,
    codeVerifier: d.codeVerifier,
    clientInformation: d.clientInformation,
    discoveryState: d.discoveryState as Record<string, unknown> | null,
    issuer: d.issuer,
  };
}

/** Where pending consents are kept, and the keyring their flows are sealed with. */
export interface ConsentDeps {
  readonly consents: McpPendingConsentStore;
  readonly keyring: SecretKeyring;
}

export interface NewPendingConsent {
  readonly tenantId: string;
  readonly principalId: string;
  readonly runId: string;
  readonly invocationId: string;
  readonly serverId: string;
  readonly authorizationUrl: string;
  readonly state: string;
  readonly flow: DelegatedFlowSnapshot;
  readonly now: Date;
}

/**
 * The worker's side of a suspension for consent: the pending consent row, with the state's hash
 * and the flow sealed under this consent's own name. Returns the row's id.
 */
export async function recordPendingConsent(deps: ConsentDeps, input: NewPendingConsent): Promise<string> {
  const id = randomUUID();
  const plain = JSON.stringify({ v: 1, ...input.flow });
  const sealed = sealMcpConsentFlow(
    deps.keyring,
    { tenantId: input.tenantId, principalId: input.principalId, serverId: input.serverId, consentId: id },
    plain,
  );
  await deps.consents.insert(input.tenantId, {
    id,
    principalId: input.principalId,
    runId: input.runId,
    invocationId: input.invocationId,
    serverId: input.serverId,
    stateHash: stateHash(input.state),
    ...sealed,
    issuer: input.flow.issuer,
    authorizationUrl: input.authorizationUrl,
    createdAt: input.now,
    expiresAt: new Date(input.now.getTime() + PENDING_CONSENT_TTL_SECONDS * 1000),
  });
  return id;
}

/** The api's side: the flow of a consent row, opened for exactly that row. */
export function openPendingConsentFlow(keyring: SecretKeyring, row: McpPendingConsentRow): DelegatedFlowSnapshot {
  const plain = openMcpConsentFlow(
    keyring,
    { tenantId: row.tenantId, principalId: row.principalId, serverId: row.serverId, consentId: row.id },
    { ciphertext: row.ciphertext, keyId: row.keyId },
  );
  let document: unknown;
  try {
    document = JSON.parse(plain);
  } catch {
    document = null;
  }
  const flow = sealedFlowOf(document);
  // The clear issuer column must be the sealed one (an altered column is refused).
  if (flow === null || flow.issuer !== row.issuer)
    throw new CredentialError('credential.secret_unreadable', null, 'The pending consent does not open for this row.');
  return flow;
}

/** The adapter's consent error, wherever it sits in a failure's cause chain (a connect failure wraps it). */
function consentErrorIn(error: unknown): McpConsentRequiredError | null {
  let at: unknown = error;
  for (let depth = 0; depth < 5 && typeof at === 'object' && at !== null; depth++) {
    if (at instanceof McpConsentRequiredError) return at;
    at = (at as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * docs/adr/0082: the executor's ConsentSuspensionHost — a call that ended with the adapter's
 * McpConsentRequiredError (its flow attached) becomes a pending consent for the calling
 * principal; anything else is declined (the call fails as before). A consent is answered once
 * the callback used its state.
 */
export class McpConsentSuspensions implements ConsentSuspensionHost {
  readonly #deps: ConsentDeps;

  constructor(deps: ConsentDeps) {
    this.#deps = deps;
  }

  async suspend(error: unknown, call: ConsentSuspensionCall): Promise<ConsentSuspended | null> {
    if (call.serverId === null) return null;
    const consent = consentErrorIn(error);
    const flow = consent?.takeFlow() ?? null;
    if (consent === null || flow === null) return null;
    const id = await recordPendingConsent(this.#deps, {
      tenantId: call.tenantId,
      principalId: call.principalId,
      runId: call.runId,
      invocationId: call.invocationId,
      serverId: call.serverId,
      authorizationUrl: consent.authorizationUrl,
      state: consent.state,
      flow,
      now: call.at,
    });
    return { id, authorizationUrl: consent.authorizationUrl, serverId: call.serverId, principalId: call.principalId };
  }

  async answered(tenantId: string, consentId: string): Promise<boolean> {
    const row = await this.#deps.consents.get(tenantId, consentId);
    return row !== null && row.usedAt !== null;
  }
}
