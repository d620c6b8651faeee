import type { EgressPolicy, WebSearchProvider } from '@veetbot/ports';
import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOL_NAMES, createBuiltinTools, WEB_TOOL_NAMES } from '../src/builtin-tools';
import { extractHtml } from '../src/web/html-text';
import { webFetchSpec } from '../src/web/web-fetch-spec';
import { webSearchSpec } from '../src/web/web-search';
import { createFakeContext } from './fake-context';

// docs/adr/0078. The fetch itself, against a real server and the real egress policy, is
// apps/integration-tests/test/web-fetch-hostile.test.ts; here: registration, classification,
// web.search over its port, and the extractor.

/** Refuses everything: web.fetch must never dial without the policy's yes. */
const REFUSING: EgressPolicy = {
  check: async () => ({ allowed: false, code: 'egress.address_refused', message: 'refused' }),
  checkStatic: () => ({ allowed: false, code: 'egress.address_refused', message: 'refused' }),
};

const provider = (search: WebSearchProvider['search']): WebSearchProvider => ({ name: 'test', search });

describe('registration', () => {
  it('builds neither web tool unless the composition gives it what it needs', () => {
    const names = createBuiltinTools().map((t) => t.spec.name);
    expect(names).toEqual([...BUILTIN_TOOL_NAMES]);
    for (const name of WEB_TOOL_NAMES) expect(names).not.toContain(name);
  });

  it('registers web.search only with a configured provider, and web.fetch only with an egress policy', () => {
    const withFetch = createBuiltinTools({ webFetch: { egress: REFUSING } }).map((t) => t.spec.name);
    expect(withFetch).toContain('web.fetch');
    expect(withFetch).not.toContain('web.search');
    const both = createBuiltinTools({ webFetch: { egress: REFUSING }, webSearch: provider(async () => []) }).map((t) => t.spec.name);
    expect(both.slice(-2)).toEqual([...WEB_TOOL_NAMES]);
  });

  it('classifies both exactly as the web_provider target requires (§ Partition)', () => {
    for (const spec of [webFetchSpec, webSearchSpec]) {
      expect(spec).toMatchObject({
        target_kind: 'web_provider',
        side_effect: 'network_read',
        idempotency: 'read_only',
        output_trust: 'external_untrusted',
      });
    }
  });

  it('web.fetch asks the policy first and reports its refusal with a stable code', async () => {
    const [tool] = createBuiltinTools({ webFetch: { egress: REFUSING } }).filter((t) => t.spec.name === 'web.fetch');
    const result = await tool!.execute({ url: 'https://example.com/' }, createFakeContext().context);
    expect(result.failure?.reason_code).toBe('tool.permission.web_address_refused');
  });
});

describe('web.search over the provider port', () => {
  const searchTool = (search: WebSearchProvider['search']) =>
    createBuiltinTools({ webSearch: provider(search) }).find((t) => t.spec.name === 'web.search')!;

  it('bounds what the provider returns: the number of hits and each field', async () => {
    const asked: unknown[] = [];
    const tool = searchTool(async (query) => {
      asked.push(query);
      return Array.from({ length: 50 }, (_, i) => ({
        title: 't'.repeat(5_000),
        url: `https://example.com/${i}`,
        snippet: 's'.repeat(5_000),
      }));
    });
    const result = await tool.execute({ query: 'veetbot', max_results: 3 }, createFakeContext().context);
    expect(asked).toEqual([{ query: 'veetbot', maxResults: 3 }]);
    const results = (result.structured as { results: { title: string; snippet: string }[] }).results;
    expect(results).toHaveLength(3);
    expect(results[0]!.title).toHaveLength(300);
    expect(results[0]!.snippet).toHaveLength(1_000);
  });

  it("never passes the provider's error text on; a non-list answer is an upstream error too", async () => {
    const failing = await searchTool(async () => {
      throw new Error('SECRET internal provider detail');
    }).execute({ query: 'x' }, createFakeContext().context);
    expect(failing.failure?.reason_code).toBe('tool.upstream_error.web_search');
    expect(JSON.stringify(failing)).not.toContain('SECRET');
    const odd = await searchTool(async () => ({ not: 'a list' }) as never).execute({ query: 'x' }, createFakeContext().context);
    expect(odd.failure?.reason_code).toBe('tool.upstream_error.web_search');
  });
});

describe('the HTML extractor', () => {
  it('skips raw-text elements whole, even when they contain markup-looking text', () => {
    const page = extractHtml('<p>a</p><script>if (x < y) { document.write("<p>injected</p>") }</script><p>b</p>', 'https://e.com/');
    expect(page.text).toBe('a\nb');
  });

  it('decodes entities, and replaces a NUL or surrogate reference instead of producing it', () => {
    expect(extractHtml('<p>&lt;&#65;&#x42;&amp;&#0;&#xD800;&bogus;</p>', 'https://e.com/').text).toBe('<AB&\uFFFD\uFFFD&bogus;');
  });

  it('keeps only http(s) link targets, resolved against the page, without user information', () => {
    const page = extractHtml(
      '<a href="https://u:p@x.com/a">one</a> <a href=\'/rel\'>two</a> <a href="data:text/html,x">three</a>',
      'https://e.com/dir/',
    );
    expect(page.text).toBe('one (https://x.com/a) two (https://e.com/rel) three');
  });

  it('reads the first title only, bounded', () => {
    const page = extractHtml(`<title>${'T'.repeat(2_000)}</title><title>second</title>`, 'https://e.com/');
    expect(page.title).toHaveLength(512);
  });
});
