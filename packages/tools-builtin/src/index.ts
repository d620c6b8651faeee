export { createBuiltinTools } from './builtin-tools';
export { createBuiltinReconcilers, type BuiltinReconcilersOptions } from './reconcile/builtin-reconcilers';
export { WEB_TOOL_NAMES } from './builtin-tools';
export { createWebFetchTool, webEvidenceKey, type WebFetchLimits, type WebFetchOptions } from './web/web-fetch';
export { createWebSearchTool } from './web/web-search';
