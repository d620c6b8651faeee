/** docs/adr/0079: what the model may ask a browser to open, judged before anything launches. */
export const BROWSER_URL_MAX_CHARS = 2_048;

/** The reason a URL is refused before navigation, or null. Only http and https; no credentials. */
export function refuseBeforeNavigation(url: string): string | null {
  if (url.length > BROWSER_URL_MAX_CHARS) return 'The URL is longer than 2048 characters.';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'The URL cannot be parsed.';
  }
  // file:, chrome:, data:, javascript:, about:, blob:, view-source: … never reach the browser.
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'Only http and https URLs can be opened.';
  if (parsed.username !== '' || parsed.password !== '') return 'A URL may not carry user information.';
  return null;
}

/** Where a page may be once an operation ends: the web, or the blank page. Anything else is left. */
export function isAllowedPageUrl(url: string): boolean {
  return url === 'about:blank' || url.startsWith('http://') || url.startsWith('https://');
}
