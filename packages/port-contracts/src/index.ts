// Contract test kits (docs/adr/0030): one per port with more than one implementation, each
// written once and run by the tests of every implementation (ARCHITECTURE.md, "One suite, every
// implementation"). Vitest code: only tests import this package, never a src/ folder.
export { describeArtifactStoreContract } from './artifact-store.contract';
export { describeBlobStoreContract } from './blob-store.contract';
export { describeCredentialResolverContract } from './credential-resolver.contract';
export type { CredentialResolverSubject } from './credential-resolver.contract';
export { describeEgressPolicyContract } from './egress-policy.contract';
export { describeMcpClientContract } from './mcp-client.contract';
export type { McpClientSubject } from './mcp-client.contract';
