import { describe, expect, it } from 'vitest';
import { AjvSchemaValidator } from '../src/index';
import { DIALECT_2020_12, SCHEMA_MAX_BYTES, SCHEMA_MAX_DEPTH } from '../src/limits';

const validator = new AjvSchemaValidator();

/** A schema whose JSON nesting depth is exactly `depth` (a chain of `not`). */
function schemaOfDepth(depth: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let d = 1; d < depth; d++) schema = { not: schema };
  return schema;
}

describe('dialect', () => {
  it('admits a schema without $schema as 2020-12', () => {
    expect(validator.admit({ type: 'object', properties: { a: { type: 'string' } } })).toEqual({ ok: true });
  });

  it('admits an explicit 2020-12 $schema, with or without the empty fragment', () => {
    expect(validator.admit({ $schema: DIALECT_2020_12, type: 'object' })).toEqual({ ok: true });
    expect(validator.admit({ $schema: `${DIALECT_2020_12}#`, type: 'object' })).toEqual({ ok: true });
  });

  it('refuses draft-07 at the root', () => {
    const result = validator.admit({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' });
    expect(result).toMatchObject({ ok: false, code: 'schema.dialect_unsupported' });
  });

  it('refuses another dialect declared by an embedded resource', () => {
    const result = validator.admit({
      type: 'object',
      $defs: { old: { $id: 'https://example.com/old', $schema: 'http://json-schema.org/draft-04/schema#' } },
    });
    expect(result).toMatchObject({ ok: false, code: 'schema.dialect_unsupported' });
  });
});

describe('$ref', () => {
  it('admits an in-document pointer and anchor', () => {
    expect(
      validator.admit({
        type: 'object',
        properties: { a: { $ref: '#/$defs/a' }, b: { $ref: '#b' } },
        $defs: { a: { type: 'string' }, b: { $anchor: 'b', type: 'number' } },
      }),
    ).toEqual({ ok: true });
  });

  it.each([
    ['an http URL', 'http://example.com/schema.json'],
    ['an https URL with a fragment', 'https://example.com/schema.json#/$defs/x'],
    ['a relative file', 'other.json#/$defs/x'],
    ['a bare name', 'defs'],
  ])('refuses %s as schema.remote_ref', (_label, ref) => {
    const result = validator.admit({ type: 'object', properties: { a: { $ref: ref } } });
    expect(result).toMatchObject({ ok: false, code: 'schema.remote_ref' });
  });

  it('refuses a reference resolved against $id (a remote by another name)', () => {
    const result = validator.admit({ $id: 'https://example.com/root.json', type: 'object', properties: { a: { $ref: 'item.json' } } });
    expect(result).toMatchObject({ ok: false, code: 'schema.remote_ref' });
  });

  it('refuses a remote $dynamicRef', () => {
    expect(validator.admit({ type: 'object', properties: { a: { $dynamicRef: 'https://example.com/x#meta' } } })).toMatchObject({
      ok: false,
      code: 'schema.remote_ref',
    });
  });

  it('treats a "$ref" inside default, const or examples as data, not a reference', () => {
    const result = validator.admit({
      type: 'object',
      properties: { a: { type: 'object', default: { $ref: 'https://example.com/x' }, examples: [{ $ref: 'y.json' }] } },
    });
    expect(result).toEqual({ ok: true });
  });

  it('refuses an in-document reference that does not resolve as schema.invalid', () => {
    expect(validator.admit({ type: 'object', properties: { a: { $ref: '#/$defs/missing' } } })).toMatchObject({
      ok: false,
      code: 'schema.invalid',
    });
  });

  it('does not quote the schema in its message', () => {
    const result = validator.admit({ type: 'object', properties: { a: { $ref: 'https://evil.example/SECRET-TOKEN' } } });
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).not.toContain('SECRET-TOKEN');
  });
});

describe('depth', () => {
  it(`admits depth ${SCHEMA_MAX_DEPTH} and refuses depth ${SCHEMA_MAX_DEPTH + 1}`, () => {
    expect(validator.admit(schemaOfDepth(SCHEMA_MAX_DEPTH))).toEqual({ ok: true });
    expect(validator.admit(schemaOfDepth(SCHEMA_MAX_DEPTH + 1))).toMatchObject({ ok: false, code: 'schema.too_deep' });
  });

  it('counts arrays as levels (JSON nesting depth, not schema depth)', () => {
    // root(1) > enum array(2) > 15 nested arrays: 17 levels although the schema itself is flat.
    let deep: unknown = 'x';
    for (let i = 0; i < 15; i++) deep = [deep];
    expect(validator.admit({ enum: [deep] })).toMatchObject({ ok: false, code: 'schema.too_deep' });
  });

  it('refuses a schema 10,000 levels deep without overflowing the stack', () => {
    expect(validator.admit(schemaOfDepth(10_000))).toMatchObject({ ok: false, code: 'schema.too_deep' });
  });

  it('refuses a cyclic object as not JSON rather than looping', () => {
    const cyclic: Record<string, unknown> = { type: 'object' };
    cyclic.not = cyclic;
    expect(validator.admit(cyclic)).toMatchObject({ ok: false, code: 'schema.invalid' });
  });
});

describe('size', () => {
  /** A schema whose UTF-8 serialization is exactly `bytes` long, padded with 2-byte é. */
  function schemaOfBytes(bytes: number): Record<string, unknown> {
    const overhead = Buffer.byteLength(JSON.stringify({ description: '' }), 'utf8');
    const padding = bytes - overhead;
    const description = 'é'.repeat(Math.floor(padding / 2)) + (padding % 2 === 1 ? 'a' : '');
    const schema = { description };
    expect(Buffer.byteLength(JSON.stringify(schema), 'utf8')).toBe(bytes);
    return schema;
  }

  it(`admits ${SCHEMA_MAX_BYTES} UTF-8 bytes and refuses one more`, () => {
    expect(validator.admit(schemaOfBytes(SCHEMA_MAX_BYTES))).toEqual({ ok: true });
    expect(validator.admit(schemaOfBytes(SCHEMA_MAX_BYTES + 1))).toMatchObject({ ok: false, code: 'schema.too_large' });
  });

  it('measures bytes, not characters', () => {
    // 20,000 characters but 40,000+ bytes.
    expect(validator.admit({ description: 'é'.repeat(20_000) })).toMatchObject({ ok: false, code: 'schema.too_large' });
  });
});

describe('compilation and shape', () => {
  it.each([
    ['an unknown type', { type: 'nope' }],
    ['a non-numeric minimum', { type: 'number', minimum: 'x' }],
    ['an invalid regular expression', { type: 'string', pattern: '(' }],
    ['draft-07 tuple items', { type: 'array', items: [{ type: 'string' }] }],
  ])('refuses %s as schema.invalid', (_label, schema) => {
    expect(validator.admit(schema)).toMatchObject({ ok: false, code: 'schema.invalid' });
  });

  it('ignores unknown keywords and formats (strict off, format is an annotation)', () => {
    expect(validator.admit({ type: 'object', 'x-vendor': { a: 1 }, properties: { d: { type: 'string', format: 'made-up' } } })).toEqual({
      ok: true,
    });
  });

  it('refuses non-JSON documents', () => {
    expect(validator.admit([] as unknown as Record<string, unknown>)).toMatchObject({ ok: false, code: 'schema.invalid' });
    expect(validator.admit({ type: 'string', default: () => 1 })).toMatchObject({ ok: false, code: 'schema.invalid' });
    expect(validator.admit({ type: 'string', default: new Date() })).toMatchObject({ ok: false, code: 'schema.invalid' });
  });

  it('requires an object root only when asked (input schemas)', () => {
    expect(validator.admit({ type: 'string' })).toEqual({ ok: true });
    expect(validator.admit({ type: 'string' }, { requireObject: true })).toMatchObject({ ok: false, code: 'schema.not_object' });
    expect(validator.admit({ properties: {} }, { requireObject: true })).toMatchObject({ ok: false, code: 'schema.not_object' });
    expect(validator.admit({ type: ['object'] }, { requireObject: true })).toEqual({ ok: true });
    expect(validator.admit({ type: 'object' }, { requireObject: true })).toEqual({ ok: true });
  });

  it('admits two schemas that share an $id', () => {
    const schema = { $id: 'https://example.com/args', type: 'object' };
    expect(validator.admit(schema)).toEqual({ ok: true });
    expect(validator.admit({ ...schema, properties: { a: { type: 'string' } } })).toEqual({ ok: true });
  });
});

describe('admission cache', () => {
  it('a document that is not JSON never shares a cached answer with the clean document it stringifies to', () => {
    const v = new AjvSchemaValidator();
    const clean = { type: 'object', properties: { a: { type: 'string' } } };
    const dirty = { type: 'object', properties: { a: { type: 'string', default: () => 'x' } } };
    expect(v.admit(clean)).toEqual({ ok: true });
    expect(v.admit(dirty)).toMatchObject({ ok: false });
    expect(v.admit(clean)).toEqual({ ok: true });
    const fresh = new AjvSchemaValidator();
    expect(fresh.admit(dirty)).toMatchObject({ ok: false });
    expect(fresh.admit(clean)).toEqual({ ok: true });
  });

  it('the same document with and without requireObject is answered separately', () => {
    const v = new AjvSchemaValidator();
    expect(v.admit({ type: 'string' })).toEqual({ ok: true });
    expect(v.admit({ type: 'string' }, { requireObject: true })).toMatchObject({ ok: false, code: 'schema.not_object' });
  });
});
