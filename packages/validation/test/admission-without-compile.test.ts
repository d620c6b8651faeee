import { Ajv2020 } from 'ajv/dist/2020';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AjvSchemaValidator } from '../src/index';

/**
 * Admission checks structure without generating code (schema-structure.ts): it must refuse
 * exactly what ajv's compile (with our options) refuses, and compile nothing itself; the
 * validator is compiled at the first validation.
 */
const compiles = (schema: Record<string, unknown>): boolean => {
  const ajv = new Ajv2020({ strict: false, validateFormats: false, ownProperties: true });
  try {
    ajv.compile(schema);
    return true;
  } catch {
    return false;
  }
};

const corpus: Array<[label: string, schema: Record<string, unknown>]> = [
  ['plain object', { type: 'object', properties: { a: { type: 'string', pattern: '^[a-z]+$' } }, required: ['a'] }],
  ['unknown vendor keyword', { type: 'object', 'x-vendor': { anything: true } }],
  ['type not a type name', { type: 'objet' }],
  ['required not an array', { type: 'object', required: 'a' }],
  ['minLength negative', { type: 'string', minLength: -1 }],
  ['properties holding a number', { type: 'object', properties: { a: 5 } }],
  ['draft-07 tuple items', { type: 'array', items: [{ type: 'string' }] }],
  ['invalid pattern', { type: 'string', pattern: '(' }],
  ['pattern valid only without the u flag', { type: 'string', pattern: '\\-' }],
  ['invalid patternProperties name', { type: 'object', patternProperties: { '[': { type: 'string' } } }],
  ['pointer reference that resolves', { type: 'object', properties: { a: { $ref: '#/$defs/x' } }, $defs: { x: { type: 'string' } } }],
  ['pointer reference to nothing', { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } }],
  [
    'percent-encoded pointer that resolves',
    { type: 'object', properties: { a: { $ref: '#/$defs/a%20b' } }, $defs: { 'a b': { type: 'string' } } },
  ],
  ['escaped pointer that resolves', { type: 'object', properties: { a: { $ref: '#/$defs/a~1b' } }, $defs: { 'a/b': { type: 'string' } } }],
  [
    'anchor reference that resolves',
    { type: 'object', properties: { a: { $ref: '#name' } }, $defs: { x: { $anchor: 'name', type: 'string' } } },
  ],
  ['anchor reference to nothing', { type: 'object', properties: { a: { $ref: '#nobody' } } }],
  ['root reference', { type: 'object', properties: { child: { $ref: '#' } } }],
  ['boolean subschemas', { type: 'object', properties: { a: true, b: false } }],
  ['$defs holding a non-schema', { type: 'object', $defs: { x: 3 } }],
];

describe('admission without code generation', () => {
  afterEach(() => vi.restoreAllMocks());

  it.each(corpus)('%s: admitted exactly when ajv compiles it', (_label, schema) => {
    const validator = new AjvSchemaValidator();
    expect(validator.admit(schema).ok).toBe(compiles(schema));
  });

  it('compiles nothing at admission; the first validation compiles the validator once', () => {
    const compile = vi.spyOn(Ajv2020.prototype, 'compile');
    const validator = new AjvSchemaValidator();
    const schemas = Array.from({ length: 50 }, (_, i) => ({ type: 'object', properties: { [`p${i}`]: { type: 'integer' } } }));
    for (const schema of schemas) expect(validator.admit(schema, { requireObject: true })).toEqual({ ok: true });
    expect(compile).not.toHaveBeenCalled();
    const key = { toolName: 'demo.tool', toolVersion: '1' };
    expect(validator.validateArguments(key, schemas[0]!, { p0: 1 })).toMatchObject({ valid: true });
    expect(validator.validateArguments(key, schemas[0]!, { p0: 'x' })).toMatchObject({ valid: false });
    expect(compile).toHaveBeenCalledTimes(1);
  });

  it('a document with an embedded resource is still compiled at admission (its references are relative to it)', () => {
    const compile = vi.spyOn(Ajv2020.prototype, 'compile');
    const validator = new AjvSchemaValidator();
    const schema = {
      type: 'object',
      $defs: { inner: { $id: 'https://example.com/inner', type: 'object', properties: { a: { $ref: '#/$defs/gone' } } } },
    };
    expect(validator.admit(schema).ok).toBe(compiles(schema));
    expect(compile).toHaveBeenCalled();
  });
});
