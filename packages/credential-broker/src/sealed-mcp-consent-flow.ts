import type { SecretKeyring, SealedSecret, SecretOwner } from './secret-crypto';
import { CredentialError } from './errors';

/** Bounds the sealed flow (the table's check allows 64 KiB of plaintext). */
export const MCP_CONSENT_FLOW_MAX_PLAINTEXT_BYTES = 65_536;

/** Whose pending consent a sealed flow belongs to: it opens for exactly this one. */
export interface McpConsentFlowOwner {
  readonly tenantId: string;
  readonly principalId: string;
  readonly serverId: string;
  readonly consentId: string;
}

/**
 * docs/adr/0082: the name a pending consent's flow is sealed under — `mcp-consent:` and the JSON
 * array (principal, server, consent id). A colon never appears in a tenant secret's name and the
 * prefix differs from a grant's (`mcp-grant:`), so a secret, a grant or another consent's flow
 * planted in the row does not authenticate.
 */
const sealingOwner = (o: McpConsentFlowOwner): SecretOwner => ({
  tenantId: o.tenantId,
  name: `mcp-consent:${JSON.stringify([o.principalId, o.serverId, o.consentId])}`,
});

/** Seals a consent's flow document (the PKCE verifier, client registration, discovery). */
export function sealMcpConsentFlow(keyring: SecretKeyring, owner: McpConsentFlowOwner, plain: string): SealedSecret {
  if (Buffer.byteLength(plain, 'utf8') > MCP_CONSENT_FLOW_MAX_PLAINTEXT_BYTES) {
    throw new CredentialError('credential.secret_unreadable', null, 'The consent flow is larger than 64 KiB; it is not stored.');
  }
  return keyring.seal(sealingOwner(owner), plain);
}

/** Opens it for exactly its owner; anything else is `credential.secret_unreadable`. */
export function openMcpConsentFlow(keyring: SecretKeyring, owner: McpConsentFlowOwner, sealed: SealedSecret): string {
  return keyring.open(sealingOwner(owner), sealed);
}
