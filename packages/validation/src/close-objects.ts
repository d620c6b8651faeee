import { schemaNodes, subschemas } from './schema-keywords';

type Schema = Record<string, unknown>;

function isSchemaObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unescapeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~');
  } catch {
    return undefined;
  }
}

/** Resolves an in-document reference (`#`, `#/json/pointer`, or `#anchor`) against the root. */
export function resolveLocalRef(root: Schema, ref: string): Schema | undefined {
  if (ref === '#') return root;
  if (ref.startsWith('#/')) {
    let node: unknown = root;
    for (const raw of ref.slice(2).split('/')) {
      const segment = unescapeSegment(raw);
      if (segment === undefined || typeof node !== 'object' || node === null || !Object.hasOwn(node, segment)) return undefined;
      node = (node as Record<string, unknown>)[segment];
    }
    return isSchemaObject(node) ? node : undefined;
  }
  const anchor = ref.slice(1);
  for (const node of schemaNodes(root)) {
    if (node.schema.$anchor === anchor || node.schema.$dynamicAnchor === anchor) return node.schema;
  }
  return undefined;
}

// In-place applicators whose evaluated properties an `unevaluatedProperties` beside them sees.
const IN_PLACE = new Set(['allOf', 'anyOf', 'oneOf', 'if', 'then', 'else', 'dependentSchemas']);

/**
 * Does this schema name properties, itself or through what it applies in place (allOf/anyOf/
 * oneOf, if/then/else, dependentSchemas, local $ref)? A schema that names none (a bare
 * `{"type": "object"}`) is a free-form map and is left open when nested.
 */
function declaresNamedProperties(schema: Schema, root: Schema): boolean {
  const visited = new Set<Schema>();
  const stack: Schema[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (visited.has(node)) continue;
    visited.add(node);
    if (isSchemaObject(node.properties) || isSchemaObject(node.patternProperties)) return true;
    for (const edge of subschemas(node)) {
      if (IN_PLACE.has(String(edge.segments[0]))) stack.push(edge.schema);
    }
    for (const keyword of ['$ref', '$dynamicRef']) {
      const ref = node[keyword];
      if (typeof ref === 'string') {
        const target = resolveLocalRef(root, ref);
        if (target !== undefined) stack.push(target);
      }
    }
  }
  return false;
}

function setsOpenness(schema: Schema): boolean {
  return Object.hasOwn(schema, 'additionalProperties') || Object.hasOwn(schema, 'unevaluatedProperties');
}

/**
 * § Argument validation: "the validator sets additionalProperties: false by default and honors
 * an explicit true". Returns a closed deep copy; the caller's schema is never touched.
 *
 * The closing keyword is `unevaluatedProperties: false`, not `additionalProperties: false`:
 * the 2020-12 keyword sees properties named through allOf, anyOf, oneOf, if/then/else and
 * `$ref`, where `additionalProperties: false` would reject every property a composed branch
 * declares. It is added where a schema sets neither `additionalProperties` nor
 * `unevaluatedProperties` (an explicit value, `true` included, is honoured), at:
 *
 * - the root, always: the arguments object. A root naming no properties takes no arguments.
 * - every nested schema applied to a nested value (properties/*, patternProperties/*,
 *   additionalProperties, items, prefixItems/*, contains, ...) that names properties itself
 *   or through what it applies in place, a `$ref` included. A nested schema naming no
 *   properties (`{"type": "object"}`) is a free-form map and stays open.
 *
 * Schemas in `$defs` and inside allOf/anyOf/oneOf/if/then/else are not closed themselves,
 * because closing a branch would reject the properties its siblings declare; their nested
 * values are closed by the same rule.
 */
export function closeObjectSchemas(schema: Schema): Schema {
  const root = structuredClone(schema);
  const stack: { node: Schema; closes: boolean }[] = [{ node: root, closes: true }];
  const seen = new Set<Schema>();
  while (stack.length > 0) {
    const { node, closes } = stack.pop()!;
    if (seen.has(node)) continue;
    seen.add(node);
    if (closes && !setsOpenness(node) && (node === root || declaresNamedProperties(node, root))) {
      node.unevaluatedProperties = false;
    }
    for (const edge of subschemas(node)) stack.push({ node: edge.schema, closes: edge.descends });
  }
  return root;
}
