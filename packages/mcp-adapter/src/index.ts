// Configuration (§ Authentication; Gate 14)
export { McpServerConfig, type McpServerConfigInput } from './config/server-config';
export { validateServerConfig, type ConfigError } from './config/validate-server-config';
export { serverConfigOfRow } from './config/server-row';
export { operatorServers, serverDirectory } from './config/server-directory';
export {
  loadOperatorConfig,
  OperatorConfigError,
  DEFAULT_OPERATOR_SETTINGS,
  STRICT_EGRESS,
  type OperatorConfig,
} from './config/operator-config';

// Egress (RULINGS.md "Egress")
export { DefaultEgressPolicy } from './egress/default-egress-policy';

// Transports
export { liveProcessGroups } from './transport/process-groups';

// The adapter
export { McpAdapter } from './adapter/mcp-adapter';

// Delegated authorization (docs/adr/0077): the check-mode user agent (`mcp check --oauth-authorize`)
export { autoApprovingUserAgent } from './auth/check-mode-user-agent';
// Consent as a run suspension (docs/adr/0082): the api's callback finishes the flow.
export { completeDelegatedConsent, type CompleteDelegatedConsentOptions } from './auth/delegated-consent';
export { type DelegatedFlowSnapshot, McpConsentRequiredError } from './errors';
