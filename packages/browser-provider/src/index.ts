export { ChromiumBrowserProvider, type ChromiumBrowserProviderOptions } from './chromium-browser-provider';
export { DestinationCheck, type DestinationCheckOptions, type DestinationDecision } from './destination';
export { DEFAULT_PROXY_LIMITS, EgressProxy, type EgressProxyLimits } from './egress-proxy';
export { BWRAP_PATH, CHROMIUM_FLAGS, CHROMIUM_PATH } from './isolated-launch';
export { EVIDENCE_MAX_ELEMENTS, flattenAriaTree, type PageElement, type PageObservation, pageEvidenceKey } from './page-evidence';
export { isAllowedPageUrl, refuseBeforeNavigation } from './url-rules';
