import { gzipSync } from 'node:zlib';
import { DefaultEgressPolicy } from '@veetbot/mcp-adapter';
import { isKnownReasonCode, renderOutcome, type ToolResultInput } from '@veetbot/domain';
import type { EgressPolicy } from '@veetbot/ports';
import { createWebFetchTool, webEvidenceKey } from '@veetbot/tools-builtin';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admitOnly, html, redirect, WebPageServer, webToolContext } from '../src/web-pages';

/**
 * Issue 29 items 1 and 5 (docs/adr/0078): web.fetch against pages a real HTTP server on
 * loopback serves. Loopback is reachable only through the operator's switch
 * (allowPrivateAddresses, or `admitOnly` for the one test origin); each hostile page ends in one
 * stable reason code of the checked-in table.
 */
let pages: WebPageServer;
/** The operator's test switches: http and loopback allowed (metadata never is). */
let relaxed: EgressPolicy;

beforeAll(async () => {
  pages = await WebPageServer.start();
  relaxed = new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true });
});
afterAll(async () => {
  await pages.close();
});

const fetchWith = (egress: EgressPolicy, url: string, limits: { maxBodyBytes?: number; timeoutMs?: number; maxRedirects?: number } = {}) =>
  createWebFetchTool({ egress, ...limits }).execute({ url }, webToolContext());

function reasonOf(result: ToolResultInput): string {
  expect(result.ok).toBe(false);
  const code = result.failure!.reason_code;
  // Every failure is a code of the table, rendered with its fixed message.
  expect(isKnownReasonCode(code)).toBe(true);
  expect(renderOutcome({ action: 'web.fetch', reasonCode: code }).status).toBe('failed');
  return code;
}

describe('web.fetch: reading a page', () => {
  it('extracts the title, headings, paragraphs, list items and link targets; drops scripts, styles and comments', async () => {
    const url = pages.route(
      '/article',
      html(`<!doctype html><html><head><title>A &amp; B</title><style>body{color:red}</style>
        <script>document.write("SECRET_SCRIPT")</script></head>
        <body><h1>Heading one</h1><p>First   paragraph with <a href="/next?x=1">a link</a>.</p>
        <!-- a comment -->
        <ul><li>alpha</li><li>beta &lt;b&gt;</li></ul><a href="javascript:alert(1)">js</a>
        <noscript>NOSCRIPT_TEXT</noscript><h2>Second</h2></body></html>`),
    );
    const result = await fetchWith(relaxed, url);
    expect(result.ok).toBe(true);
    const text = (result.content as { text: string }[])[0]!.text;
    expect(text).toBe(
      ['# Heading one', `First paragraph with a link (${pages.origin}/next?x=1).`, '- alpha', '- beta <b>', 'js', '## Second'].join('\n'),
    );
    expect(text).not.toMatch(/SECRET_SCRIPT|color:red|a comment|NOSCRIPT_TEXT|javascript/);
    expect(result.structured).toEqual({
      url,
      status: 200,
      content_type: 'text/html; charset=utf-8',
      title: 'A & B',
      redirects: 0,
      text_chars: text.length,
      truncated: false,
    });
    // The evidence key: the digest of the final URL, the title and the text (§ New evidence).
    expect(result.evidence_key).toBe(webEvidenceKey({ url, title: 'A & B', text }));
  });

  it('flags truncation at max_chars, and keys the whole page, not the cut', async () => {
    const url = pages.route('/long', (_q, r) => r.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(5000)));
    const result = await createWebFetchTool({ egress: relaxed }).execute({ url, max_chars: 100 }, webToolContext());
    expect((result.content as { text: string }[])[0]!.text).toHaveLength(100);
    expect(result.structured).toMatchObject({ truncated: true, text_chars: 100 });
    expect(result.evidence_key).toBe(webEvidenceKey({ url, title: '', text: 'x'.repeat(5000) }));
  });

  it('reads JSON and text/*; refuses other content types with tool.invalid_arguments.web_content_type', async () => {
    const json = pages.route('/data.json', (_q, r) => r.writeHead(200, { 'content-type': 'application/json' }).end('{"a":1}'));
    expect((await fetchWith(relaxed, json)).content).toEqual([{ type: 'text', text: '{"a":1}' }]);
    const pdf = pages.route('/file.pdf', (_q, r) => r.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.7'));
    expect(reasonOf(await fetchWith(relaxed, pdf))).toBe('tool.invalid_arguments.web_content_type');
  });

  it('follows a redirect on the same terms, and reports the final URL', async () => {
    const target = pages.route('/landing', html('<title>Landing</title><p>here</p>'));
    const start = pages.route('/moved', redirect('/landing', 301));
    const result = await fetchWith(relaxed, start);
    expect(result.structured).toMatchObject({ url: target, redirects: 1, title: 'Landing' });
  });
});

describe('web.fetch: hostile pages and refused addresses (each a stable code)', () => {
  it('refuses the loopback test server with the operator switch off, and reads it with the switch on', async () => {
    const url = pages.route('/switch', html('<p>local</p>'));
    const before = pages.hits.get('/switch') ?? 0;
    expect(reasonOf(await fetchWith(new DefaultEgressPolicy({ allowHttp: true }), url))).toBe('tool.permission.web_address_refused');
    expect(pages.hits.get('/switch') ?? 0).toBe(before);
    expect((await fetchWith(relaxed, url)).ok).toBe(true);
  });

  it('refuses plain http unless the operator allowed it', async () => {
    const url = pages.route('/plain', html('<p>plain</p>'));
    expect(reasonOf(await fetchWith(new DefaultEgressPolicy({ allowPrivateAddresses: true }), url))).toBe(
      'tool.permission.web_scheme_refused',
    );
  });

  it.each(['file:///etc/passwd', 'data:text/html,<p>hi</p>', 'ftp://example.com/x', 'gopher://example.com/', 'javascript:alert(1)'])(
    'refuses %s with tool.permission.web_scheme_refused, even with every switch on',
    async (url) => {
      expect(reasonOf(await fetchWith(relaxed, url))).toBe('tool.permission.web_scheme_refused');
    },
  );

  it('refuses a URL that is not one, and one carrying credentials', async () => {
    expect(reasonOf(await fetchWith(relaxed, 'not a url'))).toBe('tool.invalid_arguments.web_url_invalid');
    expect(reasonOf(await fetchWith(relaxed, `http://user:pw@127.0.0.1:${pages.port}/`))).toBe('tool.invalid_arguments.web_url_invalid');
  });

  it.each([
    ['loopback', 'http://127.0.0.1:1/'],
    ['loopback by name', 'http://localhost/'],
    ['IPv6 loopback', 'http://[::1]/'],
    ['private', 'http://10.0.0.7/'],
    ['private', 'http://192.168.1.1/admin'],
    ['link-local', 'http://169.254.10.10/'],
    ['metadata', 'http://169.254.169.254/latest/meta-data/'],
    ['metadata by name', 'http://metadata.google.internal/computeMetadata/v1/'],
  ])('refuses a redirect to %s (%s): every hop is re-checked', async (_what, location) => {
    const path = `/to-${Buffer.from(location).toString('hex')}`;
    const url = pages.route(path, redirect(location));
    // Only the test server's origin is admitted; the hop goes to the strict policy.
    const strict = admitOnly(pages.origin, new DefaultEgressPolicy({ allowHttp: true }));
    expect(reasonOf(await fetchWith(strict, url))).toBe('tool.permission.web_address_refused');
    expect(pages.hits.get(path)).toBe(1);
  });

  it('refuses a redirect to the metadata address even with the private-address switch on', async () => {
    const url = pages.route('/to-metadata', redirect('http://169.254.169.254/latest/meta-data/iam'));
    expect(reasonOf(await fetchWith(relaxed, url))).toBe('tool.permission.web_address_refused');
  });

  it('refuses a redirect to file:// with tool.permission.web_scheme_refused', async () => {
    const url = pages.route('/to-file', redirect('file:///etc/shadow'));
    expect(reasonOf(await fetchWith(relaxed, url))).toBe('tool.permission.web_scheme_refused');
  });

  it('stops a redirect loop at the hop cap with tool.upstream_error.web_redirects', async () => {
    const url = pages.route('/loop', redirect('/loop'));
    expect(reasonOf(await fetchWith(relaxed, url, { maxRedirects: 3 }))).toBe('tool.upstream_error.web_redirects');
    // The first request and three redirects followed: four requests, never a fifth.
    expect(pages.hits.get('/loop')).toBe(4);
  });

  it('refuses a name that resolves to a private address, and dials exactly the address it checked', async () => {
    const url = `http://rebind.test:${pages.port}/pinned`;
    pages.route('/pinned', html('<title>pinned</title>'));
    // The name resolves (by the policy's resolver) to loopback: refused with the switch off...
    const strict = new DefaultEgressPolicy({ allowHttp: true, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    expect(reasonOf(await fetchWith(strict, url))).toBe('tool.permission.web_address_refused');
    expect(pages.hits.get('/pinned')).toBeUndefined();
    // ...and with it on, the dial goes to the checked address: `rebind.test` has no DNS record
    // the system could have answered, so reaching the page proves the connection was pinned.
    let resolutions = 0;
    const pinned = new DefaultEgressPolicy({
      allowHttp: true,
      allowPrivateAddresses: true,
      resolve: async () => {
        resolutions += 1;
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    const result = await fetchWith(pinned, url);
    expect(result.structured).toMatchObject({ url, title: 'pinned' });
    expect(resolutions).toBe(1);
  });

  it('refuses a name with one public and one private address', async () => {
    const mixed = new DefaultEgressPolicy({
      resolve: async () => [
        { address: '93.184.216.34', family: 4 },
        { address: '10.1.2.3', family: 4 },
      ],
    });
    expect(reasonOf(await fetchWith(mixed, 'https://mixed.test/'))).toBe('tool.permission.web_address_refused');
  });

  it('bounds a page that never finishes with tool.timeout.web_fetch', async () => {
    const url = pages.route('/forever', (_q, r) => {
      r.writeHead(200, { 'content-type': 'text/html' });
      r.write('<p>start');
      // Never ended: the server keeps the connection open.
    });
    expect(reasonOf(await fetchWith(relaxed, url, { timeoutMs: 300 }))).toBe('tool.timeout.web_fetch');
  });

  it('bounds a server that never answers at all with tool.timeout.web_fetch', async () => {
    const url = pages.route('/silent', () => {});
    expect(reasonOf(await fetchWith(relaxed, url, { timeoutMs: 300 }))).toBe('tool.timeout.web_fetch');
  });

  it('refuses a body over the cap with tool.output_too_large.web_body', async () => {
    const url = pages.route('/huge', (_q, r) => r.writeHead(200, { 'content-type': 'text/plain' }).end('y'.repeat(200_000)));
    expect(reasonOf(await fetchWith(relaxed, url, { maxBodyBytes: 65_536 }))).toBe('tool.output_too_large.web_body');
  });

  it('counts decoded bytes: a small gzip bomb is refused with tool.output_too_large.web_body', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(128 * 1024);
    const url = pages.route('/bomb', (_q, r) => r.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(bomb));
    const before = process.memoryUsage().rss;
    expect(reasonOf(await fetchWith(relaxed, url, { maxBodyBytes: 1024 * 1024 }))).toBe('tool.output_too_large.web_body');
    // Nowhere near the 64 MiB the bomb expands to was held.
    expect(process.memoryUsage().rss - before).toBeLessThan(48 * 1024 * 1024);
  });

  it('reads a gzip page within the cap, and refuses a corrupt or unknown encoding with tool.upstream_error.web_response', async () => {
    const ok = pages.route('/gz', (_q, r) =>
      r.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(gzipSync('zipped text')),
    );
    expect((await fetchWith(relaxed, ok)).content).toEqual([{ type: 'text', text: 'zipped text' }]);
    const corrupt = pages.route('/corrupt', (_q, r) =>
      r.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end('not gzip at all'),
    );
    expect(reasonOf(await fetchWith(relaxed, corrupt))).toBe('tool.upstream_error.web_response');
    const odd = pages.route('/odd', (_q, r) => r.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'zstd-x' }).end('?'));
    expect(reasonOf(await fetchWith(relaxed, odd))).toBe('tool.upstream_error.web_response');
  });

  it('extracts hostile markup in time linear in its length (unclosed tags, unclosed comments)', async () => {
    const url = pages.route('/angles', html(`<p>before</p>${'<a<b'.repeat(200_000)}`));
    const result = await fetchWith(relaxed, url);
    expect(result.ok).toBe(true);
    expect((result.content as { text: string }[])[0]!.text).toBe('before');
    const comment = pages.route('/comment', html(`<p>kept</p><!--${'x'.repeat(100_000)}`));
    expect((await fetchWith(relaxed, comment)).content).toEqual([{ type: 'text', text: 'kept' }]);
  });
});
