export { API_KEY_PATTERN, apiKeyPrefix, generateApiKey, hashApiKey } from './api-keys';
export {
  composeSystem,
  GLOBAL_MAXIMUM_OUTPUT_BYTES,
  type ComposedSystem,
  type ComposeOptions,
} from './compose';
export { usePrivateUmask } from './data-folder';
export { openAndMigrate } from './database';
export { METRICS_UNAUTHORIZED, metricsAuthorized } from './metrics-token';
export { operationsListener } from './operations';
export { DEMO_TENANT_ID, ensureDemoTenant } from './demo-tenant';
export { prepareOperatorConfig } from './operator-config';
export { createApiKey, createTenant, ProvisionError, provisionTenantKey, revokeApiKey } from './provision';
export { runVeetbot } from './run';
export { readSettings } from './settings';
export { StartupError, startupErrorLine } from './startup-error';
export {
  MCP_OAUTH_CALLBACK_PATH,
  McpConsentSuspensions,
  openPendingConsentFlow,
  recordPendingConsent,
  stateHash,
} from './mcp-consents';
