import type { Ajv2020 } from 'ajv/dist/2020';
import { fromPointer } from './json-pointer';
import { schemaNodes } from './schema-keywords';

/**
 * Admission without code generation (issue 4: a 500-tool catalog must open a session in under a
 * second; compiling every schema at admission was most of it). A schema is refused here for the
 * same reasons ajv's compile would refuse it:
 * - it does not validate against the draft 2020-12 meta-schema (compile runs that check first);
 * - a `pattern` or a `patternProperties` name is not a valid Unicode regular expression (ajv
 *   builds each with `new RegExp(source, 'u')`);
 * - an in-document `$ref` / `$dynamicRef` does not resolve to a schema (admission has already
 *   refused every reference that is not `#…`).
 * The validator itself is compiled at the tool's first call (the validator cache). A document
 * that embeds a resource of its own (`$id` below the root) changes what `#…` means inside it;
 * that rare shape is compiled here instead, as before. Throws when the schema is refused.
 */
export function checkSchemaStructure(
  engine: Ajv2020,
  document: Record<string, unknown>,
  compile: (document: Record<string, unknown>) => void,
): void {
  if (!engine.validateSchema(document)) throw new Error('not a draft 2020-12 schema');
  const anchors = new Set<string>();
  const references: string[] = [];
  let embeddedResource = false;
  for (const node of schemaNodes(document)) {
    const schema = node.schema;
    if (node.segments.length > 0 && Object.hasOwn(schema, '$id')) embeddedResource = true;
    for (const keyword of ['$anchor', '$dynamicAnchor'] as const) {
      const anchor = schema[keyword];
      if (typeof anchor === 'string') anchors.add(anchor);
    }
    for (const keyword of ['$ref', '$dynamicRef'] as const) {
      const ref = schema[keyword];
      if (typeof ref === 'string') references.push(ref);
    }
    if (typeof schema.pattern === 'string') new RegExp(schema.pattern, 'u');
    const patternProperties = schema.patternProperties;
    if (typeof patternProperties === 'object' && patternProperties !== null) {
      for (const source of Object.keys(patternProperties)) new RegExp(source, 'u');
    }
  }
  if (embeddedResource) {
    compile(document);
    return;
  }
  for (const ref of references) {
    if (!resolves(document, ref.slice(1), anchors)) throw new Error('unresolved reference');
  }
}

/** `fragment` is a `$ref` without its `#`: empty (the root), a JSON Pointer, or an anchor name. */
function resolves(document: Record<string, unknown>, fragment: string, anchors: ReadonlySet<string>): boolean {
  let decoded: string;
  try {
    decoded = decodeURIComponent(fragment);
  } catch {
    return false;
  }
  if (decoded === '') return true;
  if (!decoded.startsWith('/')) return anchors.has(decoded);
  let target: unknown = document;
  for (const segment of fromPointer(decoded)) {
    if (typeof target !== 'object' || target === null || !Object.hasOwn(target, segment)) return false;
    target = (target as Record<string, unknown>)[segment];
  }
  return typeof target === 'boolean' || (typeof target === 'object' && target !== null && !Array.isArray(target));
}
