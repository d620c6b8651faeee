// The grammar lives in the domain (ADR 0017): the MCP adapter's write-time validation and this
// broker read the same one.
export { isCredentialRef, parseCredentialRef } from '@veetbot/domain';
export type { CredentialRef } from '@veetbot/domain';
