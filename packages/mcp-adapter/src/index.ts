// Configuration (§ Authentication; Gate 14)
export { McpServerConfig, AUTH_SCHEMES, MCP_TRANSPORTS, DEFAULT_CONNECT_TIMEOUT_SECONDS, DEFAULT_REQUEST_TIMEOUT_SECONDS, DEFAULT_IDLE_TIMEOUT_SECONDS, type AuthScheme, type McpServerConfigInput } from './config/server-config';
export { validateServerConfig, AUTH_NAME_PATTERN, type ConfigError, type ConfigValidation, type ConfigValidationContext } from './config/validate-server-config';
export { serverConfigOfRow } from './config/server-row';
export { operatorServers, serverDirectory, type ConfiguredServer, type McpServerDirectory } from './config/server-directory';
export { RESERVED_SERVER_IDS } from './config/validate-server-config';
export { loadOperatorConfig, parseOperatorConfig, OperatorConfigError, DEFAULT_OPERATOR_SETTINGS, STRICT_EGRESS, type EgressSettings, type OperatorConfig } from './config/operator-config';
export { splitCommandLine } from './config/command-line';
export { checkStdioEnvironment, STDIO_ENV_MAX_ENTRIES, STDIO_ENV_NAME_PATTERN, STDIO_ENV_VALUE_MAX_BYTES } from './config/stdio-environment';

// Egress (RULINGS.md "Egress")
export { DefaultEgressPolicy, type DefaultEgressPolicyOptions, type ResolvedAddress } from './egress/default-egress-policy';
export { classifyAddress, type RefusedAddressClass } from './egress/address-classes';
export { PinnedHttpClient, type FetchLike, type PinnedFetchOptions } from './egress/pinned-fetch';

// Transports
export { StdioServerTransport, DEFAULT_MAX_LINE_BYTES, DEFAULT_STDERR_MAX_BYTES, type StdioServerTransportOptions } from './transport/stdio-server-transport';
export { liveProcessGroups } from './transport/process-groups';

// Mapping (§ Discovery)
export { readRemoteCatalog, type RemoteCatalog, type RemoteToolDeclaration } from './mapping/remote-catalog';
export { mapCatalog, admitInputSchema, APPLICATION_ONLY_META_KEY, SCHEMA_MAX_BYTES, type CatalogMapping, type MappedTool } from './mapping/map-catalog';
export { cutUtf8, DESCRIPTION_MAX_BYTES } from './mapping/description';
export { translateToDraft2020 } from './mapping/schema-translation';

// The adapter
export { McpAdapter, DEFAULT_ADAPTER_SETTINGS, type McpAdapterDeps, type McpAdapterSettings, type WarmUpReport } from './adapter/mcp-adapter';

// Errors
export { McpAdapterError, LineTooLongError, ResponseTooLargeError, isOversizeError, NotDispatchedError, EgressRefusedError, McpAuthError, CapabilityRequiredError } from './errors';
