/**
 * Where JSON Schema 2020-12 keeps subschemas, so walks over a schema visit schemas and not
 * data: a `$ref` inside `default`, `const`, `enum` or `examples` is a value, not a reference.
 *
 * "descends" marks the keywords that apply their subschema to a *different* instance (a
 * property value, an array item). The others apply in place, to the same instance, and their
 * properties count as evaluated for an `unevaluatedProperties` next to them.
 */
type Shape = 'single' | 'array' | 'map';

// A Map, not an object literal: a schema keyword named `constructor` or `__proto__` must not
// find Object.prototype's members.
const KEYWORDS: ReadonlyMap<string, { readonly shape: Shape; readonly descends: boolean }> = new Map<
  string,
  { shape: Shape; descends: boolean }
>([
  ['additionalProperties', { shape: 'single', descends: true }],
  ['unevaluatedProperties', { shape: 'single', descends: true }],
  ['propertyNames', { shape: 'single', descends: true }],
  ['items', { shape: 'single', descends: true }],
  ['additionalItems', { shape: 'single', descends: true }],
  ['unevaluatedItems', { shape: 'single', descends: true }],
  ['contains', { shape: 'single', descends: true }],
  ['not', { shape: 'single', descends: false }],
  ['if', { shape: 'single', descends: false }],
  ['then', { shape: 'single', descends: false }],
  ['else', { shape: 'single', descends: false }],
  ['contentSchema', { shape: 'single', descends: false }],
  ['allOf', { shape: 'array', descends: false }],
  ['anyOf', { shape: 'array', descends: false }],
  ['oneOf', { shape: 'array', descends: false }],
  ['prefixItems', { shape: 'array', descends: true }],
  ['properties', { shape: 'map', descends: true }],
  ['patternProperties', { shape: 'map', descends: true }],
  ['dependentSchemas', { shape: 'map', descends: false }],
  ['$defs', { shape: 'map', descends: false }],
  ['definitions', { shape: 'map', descends: false }],
]);

export interface SubschemaEdge {
  /** Pointer segments from the parent schema to the subschema. */
  readonly segments: readonly (string | number)[];
  readonly schema: Record<string, unknown>;
  readonly descends: boolean;
}

function isSchemaObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object subschemas directly under `schema` (boolean schemas have none and are skipped). */
export function subschemas(schema: Record<string, unknown>): SubschemaEdge[] {
  const edges: SubschemaEdge[] = [];
  for (const keyword of Object.keys(schema)) {
    const rule = KEYWORDS.get(keyword);
    if (rule === undefined) continue;
    const value = schema[keyword];
    const { descends } = rule;
    // A single-schema keyword holding an array is draft-7 tuple `items`, invalid in 2020-12
    // (ajv refuses it at compile); its members are still walked so that a remote $ref in
    // them is reported as one.
    if ((rule.shape === 'array' || rule.shape === 'single') && Array.isArray(value)) {
      value.forEach((item, i) => {
        if (isSchemaObject(item)) edges.push({ segments: [keyword, i], schema: item, descends });
      });
    } else if (rule.shape === 'single' && isSchemaObject(value)) {
      edges.push({ segments: [keyword], schema: value, descends });
    } else if (rule.shape === 'map' && isSchemaObject(value)) {
      for (const name of Object.keys(value)) {
        const sub = value[name];
        if (isSchemaObject(sub)) edges.push({ segments: [keyword, name], schema: sub, descends });
      }
    }
  }
  return edges;
}

export interface SchemaNode {
  readonly schema: Record<string, unknown>;
  readonly segments: readonly (string | number)[];
}

/** Every object schema in the document, root first, iteratively. The caller bounds depth. */
export function* schemaNodes(root: Record<string, unknown>): Generator<SchemaNode> {
  const stack: SchemaNode[] = [{ schema: root, segments: [] }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    yield node;
    const edges = subschemas(node.schema);
    for (let i = edges.length - 1; i >= 0; i--) {
      const edge = edges[i]!;
      stack.push({ schema: edge.schema, segments: [...node.segments, ...edge.segments] });
    }
  }
}
