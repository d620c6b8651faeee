import { defineBuiltinSpec, JSON_SCHEMA_DIALECT } from '../builtin-spec';

/** The longest URL web.fetch takes (and follows in a redirect). */
export const WEB_URL_MAX_CHARS = 2_048;
/** The most text a result carries, and web.fetch's declared maximum_output_bytes (128 KiB). */
export const WEB_FETCH_MAX_OUTPUT_BYTES = 131_072;
/** Room kept for the structured part (URL, title, …) beside the text. */
const STRUCTURED_RESERVE_BYTES = 8_192;
export const WEB_FETCH_MAX_TEXT_CHARS = WEB_FETCH_MAX_OUTPUT_BYTES - STRUCTURED_RESERVE_BYTES;

/**
 * § Partition: web.fetch is a read-only capability of the web domain on the web_provider target,
 * valid only with NETWORK_READ, READ_ONLY and EXTERNAL_UNTRUSTED (the registry refuses any other
 * use of that target). docs/adr/0078.
 */
export const webFetchSpec = defineBuiltinSpec({
  name: 'web.fetch',
  version: '1.0.0',
  description:
    'Fetch a public web page over https and return its readable text: the title, headings, paragraphs, list items and ' +
    'link targets (scripts and styles removed). HTML, plain text and JSON are read; other content types are refused. ' +
    'Redirects are followed a few hops. The text is cut at max_chars; `truncated` says whether it was.',
  input_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      url: { type: 'string', minLength: 1, maxLength: WEB_URL_MAX_CHARS, description: 'An absolute https URL.' },
      max_chars: { type: 'integer', minimum: 1, maximum: WEB_FETCH_MAX_TEXT_CHARS },
    },
    required: ['url'],
    additionalProperties: false,
  },
  output_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      url: { type: 'string', description: 'The final URL, after redirects.' },
      status: { type: 'integer', minimum: 100, maximum: 599 },
      content_type: { type: 'string' },
      title: { type: 'string' },
      redirects: { type: 'integer', minimum: 0 },
      text_chars: { type: 'integer', minimum: 0 },
      truncated: { type: 'boolean' },
    },
    required: ['url', 'status', 'content_type', 'title', 'redirects', 'text_chars', 'truncated'],
    additionalProperties: false,
  },
  target_kind: 'web_provider',
  side_effect: 'network_read',
  risk: 'low',
  idempotency: 'read_only',
  required_scopes: [],
  timeout_seconds: 30,
  maximum_output_bytes: WEB_FETCH_MAX_OUTPUT_BYTES,
  allow_parallel: true,
  // A page is written by whoever runs the site.
  output_trust: 'external_untrusted',
});
