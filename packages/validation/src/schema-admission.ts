import type { AdmissionOptions, SchemaAdmission } from './types';
import { DIALECT_2020_12, SCHEMA_MAX_BYTES, SCHEMA_MAX_DEPTH } from './limits';
import { copyInstance } from './json-instance';
import { toPointer } from './json-pointer';
import { schemaNodes } from './schema-keywords';

const refuse = (code: `schema.${string}`, message: string): SchemaAdmission => ({ ok: false, code, message });

function isDialect2020(value: unknown): boolean {
  return value === DIALECT_2020_12 || value === `${DIALECT_2020_12}#`;
}

/** The root describes an object: `type: "object"` (or `["object"]`). */
export function describesObject(schema: Record<string, unknown>): boolean {
  const type = schema.type;
  return type === 'object' || (Array.isArray(type) && type.length === 1 && type[0] === 'object');
}

/**
 * § Argument validation and § Discovery: a schema is admitted when it is draft 2020-12, its
 * `$ref`s stay inside the document, it is at most 16 deep and 32 KB serialized, and it is one
 * ajv would compile. The checks run cheapest-and-safest first: depth is measured iteratively before
 * anything recurses or serializes. Messages are fixed text plus, at most, a pointer into the
 * schema; they never quote a schema value.
 *
 * `compile` is the last check, injected so admission is one pure function of the document:
 * the engine's structural check (schema-structure.ts), or a real compile when a validator is
 * being built. It throws to refuse.
 */
export function admitSchema(
  schema: unknown,
  options: AdmissionOptions,
  compile: (schema: Record<string, unknown>) => void,
): SchemaAdmission {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return refuse('schema.invalid', 'A schema document must be a JSON object.');
  }
  const proto = Object.getPrototypeOf(schema);
  if (proto !== Object.prototype && proto !== null) return refuse('schema.invalid', 'A schema document must be a JSON object.');

  const tree = copyInstance(schema, SCHEMA_MAX_DEPTH);
  if (!tree.ok) {
    return tree.reason === 'depth'
      ? refuse('schema.too_deep', `The schema nests deeper than ${SCHEMA_MAX_DEPTH} levels.`)
      : refuse('schema.invalid', `The schema holds a value that is not JSON at ${tree.instancePath || '/'}.`);
  }

  const document = schema as Record<string, unknown>;
  if (Buffer.byteLength(JSON.stringify(document), 'utf8') > SCHEMA_MAX_BYTES) {
    return refuse('schema.too_large', `The schema serializes to more than ${SCHEMA_MAX_BYTES} bytes.`);
  }

  // Absent $schema means 2020-12. Every $schema in the document is checked, because an
  // embedded resource may declare its own dialect.
  for (const node of schemaNodes(document)) {
    if (Object.hasOwn(node.schema, '$schema') && !isDialect2020(node.schema.$schema)) {
      return refuse('schema.dialect_unsupported', `Only JSON Schema draft 2020-12 is admitted (at ${toPointer(node.segments) || '/'}).`);
    }
    // ajv skips a property named __proto__ (its guard against prototype pollution), so such a
    // declaration would never be checked: refused rather than silently unenforced.
    const properties = node.schema.properties;
    if (typeof properties === 'object' && properties !== null && Object.hasOwn(properties, '__proto__')) {
      return refuse(
        'schema.invalid',
        `A property named __proto__ cannot be validated (at ${toPointer([...node.segments, 'properties'])}).`,
      );
    }
    for (const keyword of ['$ref', '$dynamicRef'] as const) {
      if (!Object.hasOwn(node.schema, keyword)) continue;
      const ref = node.schema[keyword];
      // Only "#..." resolves inside this document. Anything else (a URL, a relative file, a
      // name resolved against $id) could be fetched or changed by someone else between
      // registration and validation.
      if (typeof ref !== 'string')
        return refuse('schema.invalid', `${keyword} must be a string (at ${toPointer([...node.segments, keyword])}).`);
      if (!ref.startsWith('#'))
        return refuse('schema.remote_ref', `Only in-document references are admitted (at ${toPointer([...node.segments, keyword])}).`);
    }
  }

  if (options.requireObject === true && !describesObject(document)) {
    return refuse('schema.not_object', 'An input schema must describe an object (type: "object").');
  }

  try {
    compile(document);
  } catch {
    // ajv's message can quote the schema; the code is what callers act on.
    return refuse('schema.invalid', 'The schema is not a valid JSON Schema draft 2020-12 document.');
  }
  return { ok: true };
}
