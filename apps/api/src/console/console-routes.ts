import type { Context, Hono } from 'hono';
import type { ApiEnv } from '../deps';
import { loadConsoleFiles, type ConsoleFile } from './console-files';

/**
 * The console's content security policy (docs/adr/0046): scripts, styles and requests from this
 * origin only — no inline script or style, no eval, no plug-ins, no framing, no <base>, forms
 * only to itself.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONSOLE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
  // The files change with the code, and the page is tiny: never a stale console.
  'Cache-Control': 'no-store',
};

function answer(file: ConsoleFile | undefined, head: boolean): Response {
  if (file === undefined)
    return new Response('Not found.\n', { status: 404, headers: { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' } });
  return new Response(head ? null : file.body, {
    status: 200,
    headers: { ...SECURITY_HEADERS, 'Content-Type': file.contentType, 'Content-Length': String(file.body.byteLength) },
  });
}

/**
 * The operator console at /console (docs/adr/0046): static files only. It is a client of the
 * /v1 API in the browser and holds no server-side power of its own — no key, no session, no
 * route of its own beyond these files. Mounted with `all` (not the route table): it is not part
 * of the API, so /v1/openapi.json does not list it.
 */
export function mountConsole(app: Hono<ApiEnv>, files: ReadonlyMap<string, ConsoleFile> = loadConsoleFiles()): void {
  const serve = (c: Context<ApiEnv>): Response => {
    const method = c.req.method;
    if (method !== 'GET' && method !== 'HEAD') return answer(undefined, false);
    const rest = c.req.path.slice('/console'.length).replace(/^\//, '');
    return answer(files.get(rest === '' ? 'index.html' : rest), method === 'HEAD');
  };
  app.all('/console', serve);
  app.all('/console/*', serve);
}
