export { DefaultCredentialBroker } from './credential-broker';
export { CredentialError } from './errors';
export { SecretKeyring, secretKey } from './secret-crypto';
export { decodeSecretKey, GENERATED_KEY_FILE, loadSecretKeyring } from './secret-keys';
export type { LoadedKeyring } from './secret-keys';
export { openCredentialBroker, operatorCredentialBroker } from './tenant-broker';
export { reencryptTenantSecrets } from './reencrypt';
