export { createBuiltinTools } from './builtin-tools';
export { createBuiltinReconcilers, type BuiltinReconcilersOptions } from './reconcile/builtin-reconcilers';
export { BROWSER_SCOPES, BROWSER_TOOL_NAMES, type BrowserToolName } from './browser/browser-specs';
export { createBrowserTools } from './browser/browser-tools';
