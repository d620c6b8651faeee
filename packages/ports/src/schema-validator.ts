import type { JsonSchemaDocument } from '@veetbot/domain';

type SchemaAdmission = { readonly ok: true } | { readonly ok: false; readonly code: `schema.${string}`; readonly message: string };

/** The first validation error: where in the schema, never the offending value. */
export interface SchemaViolation {
  /** JSON Pointer into the schema (ajv's schemaPath), e.g. `#/properties/n/type`. */
  readonly schemaPath: string;
  /** JSON Pointer into the instance, e.g. `/n`. */
  readonly instancePath: string;
  readonly keyword: string;
}

export type ArgumentValidation =
  | { readonly valid: true /** the arguments with schema defaults applied */; readonly value: Record<string, unknown> }
  | { readonly valid: false; readonly violation: SchemaViolation };

interface ValidatorCacheKey {
  readonly toolName: string;
  readonly toolVersion: string;
}

/**
 * JSON Schema draft 2020-12 behind a port (STYLE.md: the MCP SDK's validator port).
 * Compiled validators are cached by (tool, version).
 */
export interface SchemaValidator {
  /** § Argument validation: dialect, in-document $ref only, depth ≤ 16, serialized ≤ 32 KB. */
  admit(schema: JsonSchemaDocument): SchemaAdmission;
  /** Step 4: additionalProperties false unless the schema says true; defaults applied. */
  validateArguments(key: ValidatorCacheKey, schema: JsonSchemaDocument, args: unknown): ArgumentValidation;
  /** Step 11: a result's structured part against output_schema. */
  validateOutput(
    key: ValidatorCacheKey,
    schema: JsonSchemaDocument,
    value: unknown,
  ): { readonly valid: true } | { readonly valid: false; readonly violation: SchemaViolation };
}
