import type { ToolSpec } from '@veetbot/domain';
import { defineBuiltinSpec, JSON_SCHEMA_DIALECT } from '../builtin-spec';

/**
 * The browser tools (docs/adr/0079), in the spirit of the accessibility-snapshot browsers
 * agents already use: open, snapshot, click, type, select, screenshot, close. Classified per
 * the partition table: the reads (open, snapshot, screenshot) are NETWORK_READ and READ_ONLY;
 * the writes (click, type, select) act on a remote site as the user would, so they are
 * EXTERNAL_WRITE, NON_IDEMPOTENT, and ask for approval under the default policy profile (any
 * origin below USER — which a run that has read a page always is). Every result is a page's
 * words: EXTERNAL_UNTRUSTED.
 */
export const BROWSER_TOOL_NAMES = [
  'browser.open',
  'browser.snapshot',
  'browser.click',
  'browser.type',
  'browser.select',
  'browser.screenshot',
  'browser.close',
] as const;
export type BrowserToolName = (typeof BROWSER_TOOL_NAMES)[number];

export const BROWSER_SCOPES = ['browser.read', 'browser.write'] as const;
export const BROWSER_REF_MAX_CHARS = 16;
export const BROWSER_TEXT_MAX_CHARS = 4_096;
export const BROWSER_SELECT_MAX_VALUES = 32;

const REF = {
  type: 'string',
  minLength: 1,
  maxLength: BROWSER_REF_MAX_CHARS,
  pattern: '^[a-z][a-z0-9]*$',
  description: 'An element reference from the latest snapshot, e.g. "e12".',
} as const;

const PAGE_OUTPUT = {
  $schema: JSON_SCHEMA_DIALECT,
  type: 'object',
  properties: {
    url: { type: 'string', maxLength: 8_192 },
    title: { type: 'string', maxLength: 512 },
    snapshot_truncated: { type: 'boolean' },
    blocked: {
      type: 'array',
      maxItems: 64,
      items: {
        type: 'object',
        properties: { destination: { type: 'string', maxLength: 255 }, code: { type: 'string', maxLength: 64 } },
        required: ['destination', 'code'],
        additionalProperties: false,
      },
    },
    blocked_truncated: { type: 'boolean' },
  },
  required: ['url', 'title', 'snapshot_truncated', 'blocked', 'blocked_truncated'],
  additionalProperties: false,
} as const;

const common = {
  kind: 'capability',
  target_kind: 'browser_provider',
  output_trust: 'external_untrusted',
  allow_parallel: false,
  maximum_output_bytes: 65_536,
} as const;

const read = { ...common, side_effect: 'network_read', risk: 'low', idempotency: 'read_only' } as const;
const write = {
  ...common,
  side_effect: 'external_write',
  risk: 'medium',
  idempotency: 'non_idempotent',
  timeout_seconds: 30,
  output_schema: PAGE_OUTPUT,
} as const;

const SNAPSHOT_NOTE = 'Returns the page as an accessibility tree whose elements carry references ([ref=e12]) for the other browser tools.';

export const browserOpenSpec: ToolSpec = defineBuiltinSpec({
  ...read,
  required_scopes: ['browser.read'],
  name: 'browser.open',
  version: '1.0.0',
  description: `Open an http or https URL in this run's browser (one per run; it starts on first use). ${SNAPSHOT_NOTE} Requests the egress policy refuses are listed, not loaded.`,
  input_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: { url: { type: 'string', minLength: 1, maxLength: 2_048, description: 'An http or https URL.' } },
    required: ['url'],
    additionalProperties: false,
  },
  output_schema: PAGE_OUTPUT,
  timeout_seconds: 60,
});

export const browserSnapshotSpec: ToolSpec = defineBuiltinSpec({
  ...read,
  required_scopes: ['browser.read'],
  name: 'browser.snapshot',
  version: '1.0.0',
  description: `Look at the page this run's browser has open again. ${SNAPSHOT_NOTE}`,
  input_schema: { $schema: JSON_SCHEMA_DIALECT, type: 'object', properties: {}, additionalProperties: false },
  output_schema: PAGE_OUTPUT,
  timeout_seconds: 30,
});

export const browserClickSpec: ToolSpec = defineBuiltinSpec({
  ...write,
  required_scopes: ['browser.write'],
  name: 'browser.click',
  version: '1.0.0',
  description: `Click an element of the open page. ${SNAPSHOT_NOTE}`,
  input_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: { ref: REF },
    required: ['ref'],
    additionalProperties: false,
  },
});

export const browserTypeSpec: ToolSpec = defineBuiltinSpec({
  ...write,
  required_scopes: ['browser.write'],
  name: 'browser.type',
  version: '1.0.0',
  description: `Replace the text of an editable element of the open page, and press Enter after it if submit is true. ${SNAPSHOT_NOTE}`,
  input_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      ref: REF,
      text: { type: 'string', maxLength: BROWSER_TEXT_MAX_CHARS },
      submit: { type: 'boolean', description: 'Press Enter after typing (default false).' },
    },
    required: ['ref', 'text'],
    additionalProperties: false,
  },
});

export const browserSelectSpec: ToolSpec = defineBuiltinSpec({
  ...write,
  required_scopes: ['browser.write'],
  name: 'browser.select',
  version: '1.0.0',
  description: `Choose options of a select element of the open page, by value or label. ${SNAPSHOT_NOTE}`,
  input_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      ref: REF,
      values: { type: 'array', minItems: 1, maxItems: BROWSER_SELECT_MAX_VALUES, items: { type: 'string', maxLength: 1_024 } },
    },
    required: ['ref', 'values'],
    additionalProperties: false,
  },
});

export const browserScreenshotSpec: ToolSpec = defineBuiltinSpec({
  ...read,
  required_scopes: ['browser.read'],
  name: 'browser.screenshot',
  version: '1.0.0',
  description: 'Take a PNG screenshot of the visible part of the open page; it is stored as an artifact.',
  input_schema: { $schema: JSON_SCHEMA_DIALECT, type: 'object', properties: {}, additionalProperties: false },
  output_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: { url: { type: 'string', maxLength: 8_192 }, bytes: { type: 'integer', minimum: 0 } },
    required: ['url', 'bytes'],
    additionalProperties: false,
  },
  timeout_seconds: 30,
});

export const browserCloseSpec: ToolSpec = defineBuiltinSpec({
  ...common,
  name: 'browser.close',
  version: '1.0.0',
  description: "Close this run's browser. The next browser.open starts a fresh one (no cookies, no history).",
  input_schema: { $schema: JSON_SCHEMA_DIALECT, type: 'object', properties: {}, additionalProperties: false },
  output_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: { closed: { type: 'boolean' } },
    required: ['closed'],
    additionalProperties: false,
  },
  side_effect: 'none',
  risk: 'low',
  idempotency: 'idempotent',
  required_scopes: ['browser.read'],
  timeout_seconds: 15,
});
