export { Secret } from './secret';
export { DefaultCredentialBroker, MAXIMUM_CREDENTIAL_FILE_BYTES } from './credential-broker';
export type { DefaultCredentialBrokerOptions } from './credential-broker';
export { isCredentialRef, parseCredentialRef } from './credential-ref';
export type { CredentialRef } from './credential-ref';
export { CredentialError } from './errors';
export type { CredentialErrorCode } from './errors';
