import type { Tool, WebSearchProvider } from '@veetbot/ports';
import { defineBuiltinSpec, JSON_SCHEMA_DIALECT } from '../builtin-spec';
import { toolFailure } from '../tool-result-helpers';

const QUERY_MAX_CHARS = 400;
const RESULTS_MAX = 10;
const FIELD_MAX_CHARS = { title: 300, url: 2_048, snippet: 1_000 } as const;

/** § Partition: web.search, the web domain's other read-only capability (docs/adr/0078). */
export const webSearchSpec = defineBuiltinSpec({
  name: 'web.search',
  version: '1.0.0',
  description: 'Search the web. Returns up to max_results hits, each a title, a URL and a snippet; read a hit with web.fetch.',
  input_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      query: { type: 'string', minLength: 1, maxLength: QUERY_MAX_CHARS },
      max_results: { type: 'integer', minimum: 1, maximum: RESULTS_MAX },
    },
    required: ['query'],
    additionalProperties: false,
  },
  output_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      results: {
        type: 'array',
        maxItems: RESULTS_MAX,
        items: {
          type: 'object',
          properties: { title: { type: 'string' }, url: { type: 'string' }, snippet: { type: 'string' } },
          required: ['title', 'url', 'snippet'],
          additionalProperties: false,
        },
      },
    },
    required: ['results'],
    additionalProperties: false,
  },
  target_kind: 'web_provider',
  side_effect: 'network_read',
  risk: 'low',
  idempotency: 'read_only',
  required_scopes: [],
  timeout_seconds: 30,
  maximum_output_bytes: 65_536,
  allow_parallel: true,
  output_trust: 'external_untrusted',
});

const bounded = (value: unknown, max: number): string => (typeof value === 'string' ? value.slice(0, max) : '');

/** web.search over the operator's provider; built only when the operator configured one. */
export function createWebSearchTool(provider: WebSearchProvider): Tool {
  return {
    spec: webSearchSpec,
    async execute(args, ctx) {
      const maxResults = Math.min(typeof args.max_results === 'number' ? args.max_results : 5, RESULTS_MAX);
      let hits: readonly unknown[];
      try {
        const answer: unknown = await provider.search({ query: String(args.query), maxResults }, ctx.cancellation);
        if (!Array.isArray(answer)) return toolFailure('upstream_error', 'web_search', 'The search provider answered with no list.');
        hits = answer;
      } catch {
        // The provider's own text never becomes a message (§ External text is data).
        return toolFailure('upstream_error', 'web_search', 'The search provider failed.', true);
      }
      const results = hits.slice(0, maxResults).map((hit) => {
        const h = (typeof hit === 'object' && hit !== null ? hit : {}) as Record<string, unknown>;
        return {
          title: bounded(h.title, FIELD_MAX_CHARS.title),
          url: bounded(h.url, FIELD_MAX_CHARS.url),
          snippet: bounded(h.snippet, FIELD_MAX_CHARS.snippet),
        };
      });
      const text = results.map((r, i) => `${i + 1}. ${r.title}\n${r.url}\n${r.snippet}`).join('\n\n');
      return { ok: true, content: [{ type: 'text', text }], structured: { results } };
    },
  };
}
