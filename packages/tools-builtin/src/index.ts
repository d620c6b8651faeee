export { createBuiltinTools } from './builtin-tools';
export { createBrowserTools } from './browser/browser-tools';
export { createBuiltinReconcilers, type BuiltinReconcilersOptions } from './reconcile/builtin-reconcilers';
export { createWebFetchTool, webEvidenceKey, type WebFetchLimits, type WebFetchOptions } from './web/web-fetch';
