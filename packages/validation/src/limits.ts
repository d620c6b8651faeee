import { CANONICAL_MAX_DEPTH } from '@veetbot/domain';

/** The only dialect admitted (§ Argument validation: "JSON Schema draft 2020-12"). */
export const DIALECT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/**
 * § Discovery: "Schema depth is capped at 16". Depth is the JSON nesting depth of the schema
 * document: the root object is depth 1 and every object or array inside a container adds one;
 * scalars add nothing. So `{"type":"object"}` is 1 and
 * `{"properties":{"a":{"type":"string"}}}` is 3.
 */
export const SCHEMA_MAX_DEPTH = 16;

/** § Discovery: "total serialized size at 32 KB": UTF-8 bytes of JSON.stringify(schema). */
export const SCHEMA_MAX_BYTES = 32_768;

/**
 * Arguments and outputs nested deeper than this are refused before ajv sees them (ajv
 * recurses through `$ref` cycles, so a 10,000-deep instance could overflow the stack). The
 * same bound as the canonical form, which would refuse anything deeper anyway.
 */
export const INSTANCE_MAX_DEPTH = CANONICAL_MAX_DEPTH;

/** Violation pointers are truncated here: an instance key is model-produced text. */
export const POINTER_MAX_CHARS = 256;

/** Compiled validators kept per cache (arguments, outputs); the oldest is dropped first. */
export const DEFAULT_MAX_CACHED_VALIDATORS = 2_048;
