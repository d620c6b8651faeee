// The egress policy alone (docs/adr/0079): an entry that reaches no MCP SDK, so a package whose
// tests judge destinations with the real policy (the browser provider's) need not load the adapter.
export { classifyAddress, isMetadataHostName, METADATA_ENDPOINTS, type RefusedAddressClass } from './address-classes';
export { DefaultEgressPolicy, type DefaultEgressPolicyOptions, hostOf, type ResolvedAddress } from './default-egress-policy';
