export { DefaultCredentialResolver } from './default-credential-resolver';
export { CredentialError } from './errors';
export { SecretKeyring, secretKey } from './secret-crypto';
export { decodeSecretKey, GENERATED_KEY_FILE, loadSecretKeyring } from './secret-keys';
export type { LoadedKeyring } from './secret-keys';
export { openCredentialBroker, operatorCredentialBroker } from './tenant-scoped-credential-resolvers';
export { reencryptTenantSecrets } from './reencrypt';
export { reencryptMcpDelegatedGrants, SealedMcpTokenStore } from './sealed-mcp-token-store';
export {
  type McpConsentFlowOwner,
  openMcpConsentFlow,
  sealMcpConsentFlow,
} from './sealed-mcp-consent-flow';
