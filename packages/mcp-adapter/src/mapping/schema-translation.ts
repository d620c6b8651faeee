/**
 * Remote input schemas arrive in whatever dialect the server's library writes; most TypeScript
 * servers (zod-to-json-schema) declare draft-07. The platform admits draft 2020-12 only
 * (§ Argument validation), so a declaration in draft-04/06/07 or 2019-09 is translated to
 * 2020-12 before admission: the dialect marker is dropped and the keywords whose meaning
 * changed are rewritten (definitions → $defs and its references, tuple `items` → prefixItems,
 * additionalItems → items, dependencies → dependentRequired/dependentSchemas, draft-04's
 * boolean exclusive bounds → numeric ones). A schema without `$schema` is taken as 2020-12 and
 * left alone. The catalog hash is computed over the declaration as the server sent it; the
 * translated schema is what is admitted, advertised, recorded and validated against.
 */

const OLDER_DIALECTS = /^https?:\/\/json-schema\.org\/(draft-0[467]\/schema|draft\/2019-09\/schema)#?$/;

// Keywords whose values are schemas, maps of schemas, or arrays of schemas.
const SCHEMA_VALUED = [
  'items',
  'additionalItems',
  'additionalProperties',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
];
const SCHEMA_MAPS = ['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas'];
const SCHEMA_ARRAYS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];

/** Far above the admitted depth: translation stops here, and admission refuses the rest. */
const TRANSLATION_MAX_DEPTH = 64;

export type Translation =
  | { readonly ok: true; readonly schema: Record<string, unknown> }
  | { readonly ok: false; readonly code: 'schema.too_deep' };

export function declaresOlderDialect(schema: Record<string, unknown>): boolean {
  return typeof schema.$schema === 'string' && OLDER_DIALECTS.test(schema.$schema);
}

export function translateToDraft2020(schema: Record<string, unknown>): Translation {
  if (!declaresOlderDialect(schema)) return { ok: true, schema };
  try {
    return { ok: true, schema: translateNode(schema, 0) as Record<string, unknown> };
  } catch (error) {
    if (error instanceof TooDeep) return { ok: false, code: 'schema.too_deep' };
    throw error;
  }
}

class TooDeep extends Error {}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function rewriteRef(ref: unknown): unknown {
  return typeof ref === 'string' && ref.startsWith('#/definitions/') ? `#/$defs/${ref.slice('#/definitions/'.length)}` : ref;
}

function translateNode(node: unknown, depth: number): unknown {
  if (depth > TRANSLATION_MAX_DEPTH) throw new TooDeep();
  if (!isObject(node)) return node; // booleans and anything else admission will judge
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema' && typeof value === 'string' && OLDER_DIALECTS.test(value)) continue;
    if (key === '$ref') out[key] = rewriteRef(value);
    else if (SCHEMA_VALUED.includes(key))
      out[key] = Array.isArray(value) ? value.map((v) => translateNode(v, depth + 1)) : translateNode(value, depth + 1);
    else if (SCHEMA_MAPS.includes(key) && isObject(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, translateNode(v, depth + 1)]));
    else if (SCHEMA_ARRAYS.includes(key) && Array.isArray(value)) out[key] = value.map((v) => translateNode(v, depth + 1));
    else if (key === 'dependencies' && isObject(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, Array.isArray(v) ? v : translateNode(v, depth + 1)]));
    else out[key] = value;
  }
  if ('definitions' in out) {
    if (!('$defs' in out)) out.$defs = out.definitions;
    delete out.definitions;
  }
  if (Array.isArray(out.items)) {
    out.prefixItems = out.items;
    if ('additionalItems' in out) out.items = out.additionalItems;
    else delete out.items;
    delete out.additionalItems;
  } else {
    delete out.additionalItems;
  }
  if (isObject(out.dependencies)) {
    const required: Record<string, unknown> = {};
    const schemas: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(out.dependencies)) (Array.isArray(v) ? required : schemas)[k] = v;
    if (Object.keys(required).length > 0)
      out.dependentRequired = { ...(isObject(out.dependentRequired) ? out.dependentRequired : {}), ...required };
    if (Object.keys(schemas).length > 0)
      out.dependentSchemas = { ...(isObject(out.dependentSchemas) ? out.dependentSchemas : {}), ...schemas };
    delete out.dependencies;
  }
  for (const [bound, exclusive] of [
    ['maximum', 'exclusiveMaximum'],
    ['minimum', 'exclusiveMinimum'],
  ] as const) {
    if (typeof out[exclusive] === 'boolean') {
      if (out[exclusive] === true && typeof out[bound] === 'number') {
        out[exclusive] = out[bound];
        delete out[bound];
      } else {
        delete out[exclusive];
      }
    }
  }
  return out;
}
