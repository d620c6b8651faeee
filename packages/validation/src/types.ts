import type { JsonSchemaDocument } from '@veetbot/domain';

// These shapes mirror @veetbot/ports' SchemaValidator types exactly. The boundary table lets
// this package import domain and ajv only, so it restates them; the registry package holds a
// type-level test that AjvSchemaValidator is assignable to ports.SchemaValidator.

export type { JsonSchemaDocument };

export type SchemaAdmission = { readonly ok: true } | { readonly ok: false; readonly code: `schema.${string}`; readonly message: string };

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

export type OutputValidation = { readonly valid: true } | { readonly valid: false; readonly violation: SchemaViolation };

export interface ValidatorCacheKey {
  readonly toolName: string;
  readonly toolVersion: string;
}

export interface AdmissionOptions {
  /**
   * Input schemas: the root must describe an object (`type: "object"`), because a tool's
   * arguments are one. Output schemas are not constrained, so this is off by default.
   */
  readonly requireObject?: boolean;
}
