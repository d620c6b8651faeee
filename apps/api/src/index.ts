export { buildApp, type ApiApp } from './app';
export { DEFAULT_API_SETTINGS, type ApiDeps, type ApiSettings, type ReadinessReport, type MetricsSource } from './deps';
export { ApiError } from './api-error';
export { generateApiKey, hashApiKey, apiKeyPrefix } from '@veetbot/composition';
