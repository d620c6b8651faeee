import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_ROOT } from '../src/console/console-files';
import { openApiHarness, type ApiHarness } from './harness';

// The operator console's files as the api serves them (docs/adr/0046). The browser half — the
// console driving the real api and worker in chromium — is apps/integration-tests
// test/e2e-console-browser.test.ts.

let h: ApiHarness;
beforeAll(async () => {
  h = await openApiHarness({ worker: false });
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const get = (path: string, method = 'GET') => h.api.app.request(path, { method });

function consoleFiles(folder = CONSOLE_ROOT): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? consoleFiles(join(folder, entry.name)) : [join(folder, entry.name)],
  );
}

describe('/console', () => {
  it('serves the page, its script and its stylesheet with a strict CSP, nosniff and no framing, without a key', async () => {
    for (const [path, type] of [
      ['/console', 'text/html; charset=utf-8'],
      ['/console/', 'text/html; charset=utf-8'],
      ['/console/index.html', 'text/html; charset=utf-8'],
      ['/console/js/app.js', 'text/javascript; charset=utf-8'],
      ['/console/console.css', 'text/css; charset=utf-8'],
    ] as const) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toBe(type);
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp.split('; ')).toEqual(
        expect.arrayContaining([
          "default-src 'self'",
          "script-src 'self'",
          "style-src 'self'",
          "object-src 'none'",
          "frame-ancestors 'none'",
        ]),
      );
      expect(csp).not.toMatch(/unsafe-|data:|\*/);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    }
    const head = await get('/console/js/app.js', 'HEAD');
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('answers only the files it was started with: unknown names, traversal, other methods and dot files are 404 with the same headers', async () => {
    for (const path of [
      '/console/nope.js',
      '/console/../package.json',
      '/console/%2e%2e/package.json',
      '/console/js/../../src/app.ts',
      '/console/js/%2e%2e%2f%2e%2e%2fpackage.json',
      '/console/js',
      '/console/index.html/',
      '/console/.gitignore',
    ]) {
      const response = await get(path);
      expect(response.status, path).toBe(404);
      expect(await response.text(), path).not.toContain('"name"');
      // A path the URL parser moves out of /console is the API's own not_found.
      if (new URL(path, 'http://127.0.0.1').pathname.startsWith('/console'))
        expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
    expect((await get('/console/index.html', 'POST')).status).toBe(404);
    expect((await get('/console/js/app.js', 'DELETE')).status).toBe(404);
  });

  it('is not part of the API: /v1/openapi.json does not list it, and /v1 still needs a key', async () => {
    const document = (await (await h.call('GET', '/v1/openapi.json', { key: null })).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths).filter((p) => p.startsWith('/console'))).toEqual([]);
    expect((await h.call('GET', '/v1/approvals', { key: null })).status).toBe(401);
  });

  it('the console source never makes markup from text, evaluates code, runs inline script or fetches from another origin', () => {
    const files = consoleFiles();
    expect(files.some((f) => f.endsWith('app.js'))).toBe(true);
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      expect(text, file).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment|srcdoc/);
      expect(text, file).not.toMatch(/\beval\(|new Function\(|setTimeout\(['"`]|setInterval\(['"`]/);
      expect(text, file).not.toMatch(/https?:\/\//);
      expect(text, file).not.toMatch(/localStorage|document\.cookie/);
    }
    const html = readFileSync(join(CONSOLE_ROOT, 'index.html'), 'utf8');
    // Every <script> names a file of this origin; no inline handler attributes.
    for (const tag of html.match(/<script\b[^>]*>/g) ?? []) expect(tag).toMatch(/src="\/console\//);
    expect(html).not.toMatch(/<script\b[^>]*>[^<]+<\/script>/);
    expect(html).not.toMatch(/\son[a-z]+=/);
  });
});
