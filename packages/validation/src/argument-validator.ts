import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import type { ArgumentValidation, OutputValidation, SchemaViolation } from './types';
import { INSTANCE_MAX_DEPTH } from './limits';
import { copyInstance, toPlainObjects, type InstanceRefusal } from './json-instance';

/** A compiled argument validator and whether it needs null-prototype instances. */
export interface CompiledArguments {
  readonly validate: ValidateFunction;
  readonly nullPrototype: boolean;
}
import { boundPointer } from './json-pointer';

/** The first ajv error as a violation: where, and which keyword; never the value or ajv's text. */
function violationOf(errors: readonly ErrorObject[] | null | undefined): SchemaViolation {
  const first = errors?.[0];
  if (first === undefined) return { schemaPath: '#', instancePath: '', keyword: 'false' };
  return { schemaPath: boundPointer(first.schemaPath), instancePath: boundPointer(first.instancePath), keyword: first.keyword };
}

/**
 * A refusal before ajv ran: too deep (keyword `depth`), or not a JSON tree (keyword `type`).
 * Both point at the schema root, because no schema keyword was reached.
 */
function refusalViolation(refusal: InstanceRefusal): SchemaViolation {
  return { schemaPath: '#', instancePath: refusal.instancePath, keyword: refusal.reason === 'depth' ? 'depth' : 'type' };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Step 4. The arguments are a plain JSON object, copied (never mutated: ajv's `useDefaults`
 * writes into the copy), bounded in depth, then validated against the closed, compiled input
 * schema. The value returned is the copy with defaults applied: the input to step 5.
 */
export function validateArgumentsWith(compiled: CompiledArguments, args: unknown): ArgumentValidation {
  if (!isPlainObject(args)) {
    return { valid: false, violation: { schemaPath: '#/type', instancePath: '', keyword: 'type' } };
  }
  const { validate, nullPrototype } = compiled;
  const copy = copyInstance(args, INSTANCE_MAX_DEPTH, nullPrototype);
  if (!copy.ok) return { valid: false, violation: refusalViolation(copy) };
  if (!validate(copy.value)) return { valid: false, violation: violationOf(validate.errors) };
  const value = nullPrototype ? toPlainObjects(copy.value) : copy.value;
  return { valid: true, value: value as Record<string, unknown> };
}

/** Step 11. The same guards, no defaults, no closing: the output schema is taken as written. */
export function validateOutputWith(validate: ValidateFunction, value: unknown): OutputValidation {
  const copy = copyInstance(value, INSTANCE_MAX_DEPTH);
  if (!copy.ok) return { valid: false, violation: refusalViolation(copy) };
  if (!validate(copy.value)) return { valid: false, violation: violationOf(validate.errors) };
  return { valid: true };
}
