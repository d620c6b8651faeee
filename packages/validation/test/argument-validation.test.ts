import { describe, expect, it } from 'vitest';
import { AjvSchemaValidator } from '../src/index';

const key = { toolName: 'demo.tool', toolVersion: '1' };

function fresh(): AjvSchemaValidator {
  return new AjvSchemaValidator();
}

describe('valid arguments', () => {
  it('returns the arguments with defaults applied, without touching the caller’s object or schema', () => {
    const schema = {
      type: 'object',
      properties: {
        path: { type: 'string' },
        mode: { type: 'string', default: 'read' },
        options: { type: 'object', properties: { depth: { type: 'integer', default: 2 } }, default: {} },
      },
      required: ['path'],
    };
    const schemaBefore = structuredClone(schema);
    const args = { path: 'a.txt' };
    const result = fresh().validateArguments(key, schema, args);
    expect(result).toEqual({ valid: true, value: { path: 'a.txt', mode: 'read', options: { depth: 2 } } });
    expect(args).toEqual({ path: 'a.txt' });
    expect(schema).toEqual(schemaBefore);
  });

  it('returns ordinary objects, and a default is fresh on every call', () => {
    const validator = fresh();
    const schema = { type: 'object', properties: { tags: { type: 'array', default: [] } } };
    const first = validator.validateArguments(key, schema, {});
    if (!first.valid) throw new Error('expected valid');
    expect(Object.getPrototypeOf(first.value)).toBe(Object.prototype);
    (first.value.tags as unknown[]).push('mutated');
    const second = validator.validateArguments(key, schema, {});
    expect(second).toEqual({ valid: true, value: { tags: [] } });
  });

  it('does not coerce types', () => {
    const result = fresh().validateArguments(key, { type: 'object', properties: { n: { type: 'integer' } } }, { n: '5' });
    expect(result).toEqual({ valid: false, violation: { schemaPath: '#/properties/n/type', instancePath: '/n', keyword: 'type' } });
  });
});

describe('unknown arguments (closed by default)', () => {
  const schema = { type: 'object', properties: { a: { type: 'string' } } };

  it('rejects an unknown top-level argument', () => {
    const result = fresh().validateArguments(key, schema, { a: 'x', extra: 1 });
    expect(result).toEqual({
      valid: false,
      violation: { schemaPath: '#/unevaluatedProperties', instancePath: '', keyword: 'unevaluatedProperties' },
    });
  });

  it('rejects any argument for a root that names none (a tool without arguments)', () => {
    expect(fresh().validateArguments(key, { type: 'object' }, {})).toEqual({ valid: true, value: {} });
    expect(fresh().validateArguments(key, { type: 'object' }, { a: 1 })).toMatchObject({ valid: false });
  });

  it('honours an explicit additionalProperties: true', () => {
    const open = { ...schema, additionalProperties: true };
    expect(fresh().validateArguments(key, open, { a: 'x', extra: 1 })).toEqual({ valid: true, value: { a: 'x', extra: 1 } });
  });

  it('honours an explicit additionalProperties schema and unevaluatedProperties', () => {
    const typed = { ...schema, additionalProperties: { type: 'number' } };
    expect(fresh().validateArguments(key, typed, { a: 'x', extra: 1 })).toMatchObject({ valid: true });
    expect(fresh().validateArguments(key, typed, { a: 'x', extra: 'no' })).toMatchObject({ valid: false, violation: { keyword: 'type' } });
    const unevaluated = { ...schema, unevaluatedProperties: true };
    expect(fresh().validateArguments(key, unevaluated, { a: 'x', extra: 1 })).toMatchObject({ valid: true });
  });

  it('closes nested objects that name properties, and leaves free-form maps open', () => {
    const nested = {
      type: 'object',
      properties: {
        target: { type: 'object', properties: { host: { type: 'string' } } },
        headers: { type: 'object' },
        items: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' } } } },
      },
    };
    const validator = fresh();
    expect(
      validator.validateArguments(key, nested, { target: { host: 'h' }, headers: { 'x-any': '1' }, items: [{ id: 'i' }] }),
    ).toMatchObject({ valid: true });
    expect(validator.validateArguments(key, nested, { target: { host: 'h', port: 1 } })).toEqual({
      valid: false,
      violation: { schemaPath: '#/properties/target/unevaluatedProperties', instancePath: '/target', keyword: 'unevaluatedProperties' },
    });
    expect(validator.validateArguments(key, nested, { items: [{ id: 'i', extra: true }] })).toMatchObject({
      valid: false,
      violation: { instancePath: '/items/0', keyword: 'unevaluatedProperties' },
    });
  });

  it('sees properties named through allOf composition at the root', () => {
    const composed = {
      type: 'object',
      allOf: [{ properties: { a: { type: 'string' } } }, { properties: { b: { type: 'number' } } }],
    };
    const validator = fresh();
    expect(validator.validateArguments(key, composed, { a: 'x', b: 1 })).toMatchObject({ valid: true });
    expect(validator.validateArguments(key, composed, { a: 'x', b: 1, c: true })).toMatchObject({
      valid: false,
      violation: { keyword: 'unevaluatedProperties' },
    });
  });

  it('closes a nested value described through $ref, and honours openness declared in $defs', () => {
    const referenced = {
      type: 'object',
      properties: { address: { $ref: '#/$defs/address' }, meta: { $ref: '#/$defs/meta' } },
      $defs: {
        address: { type: 'object', properties: { city: { type: 'string' } } },
        meta: { type: 'object', properties: { v: { type: 'integer' } }, additionalProperties: true },
      },
    };
    const validator = fresh();
    expect(validator.validateArguments(key, referenced, { address: { city: 'c' }, meta: { v: 1, anything: 2 } })).toMatchObject({
      valid: true,
    });
    expect(validator.validateArguments(key, referenced, { address: { city: 'c', zip: '1' } })).toMatchObject({
      valid: false,
      violation: { instancePath: '/address', keyword: 'unevaluatedProperties' },
    });
  });

  it('handles a recursive schema (a tree of nodes)', () => {
    const tree = {
      type: 'object',
      properties: { root: { $ref: '#/$defs/node' } },
      $defs: {
        node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } } },
      },
    };
    const validator = fresh();
    expect(validator.validateArguments(key, tree, { root: { name: 'a', children: [{ name: 'b', children: [] }] } })).toMatchObject({
      valid: true,
    });
    expect(validator.validateArguments(key, tree, { root: { name: 'a', children: [{ name: 'b', bad: 1 }] } })).toMatchObject({
      valid: false,
      violation: { instancePath: '/root/children/0' },
    });
  });
});

describe('schemas referring to their own root', () => {
  it('validates through $ref "#" and closes every level', () => {
    const recursive = { type: 'object', properties: { name: { type: 'string' }, next: { $ref: '#' } } };
    const validator = fresh();
    expect(validator.validateArguments(key, recursive, { name: 'a', next: { name: 'b', next: { name: 'c' } } })).toMatchObject({
      valid: true,
    });
    expect(validator.validateArguments(key, recursive, { name: 'a', next: { name: 'b', other: 1 } })).toMatchObject({
      valid: false,
      violation: { instancePath: '/next', keyword: 'unevaluatedProperties' },
    });
  });

  it('compiles two tools whose schemas share an $id', () => {
    const validator = fresh();
    const a = { $id: 'https://example.com/args', type: 'object', properties: { a: { type: 'string' } } };
    const b = { $id: 'https://example.com/args', type: 'object', properties: { b: { type: 'string' } } };
    expect(validator.validateArguments({ toolName: 'demo.a', toolVersion: '1' }, a, { a: 'x' })).toMatchObject({ valid: true });
    expect(validator.validateArguments({ toolName: 'demo.b', toolVersion: '1' }, b, { b: 'x' })).toMatchObject({ valid: true });
    expect(validator.validateArguments({ toolName: 'demo.b', toolVersion: '1' }, b, { a: 'x' })).toMatchObject({ valid: false });
  });
});

describe('refusals', () => {
  it.each([
    ['an array', []],
    ['null', null],
    ['a string', 'x'],
    ['a number', 5],
    ['undefined', undefined],
    ['a class instance', new Date()],
  ])('refuses %s as arguments with keyword type at #/type', (_label, args) => {
    expect(fresh().validateArguments(key, { type: 'object' }, args)).toEqual({
      valid: false,
      violation: { schemaPath: '#/type', instancePath: '', keyword: 'type' },
    });
  });

  it('reports the first violation only, and never the value', () => {
    const schema = { type: 'object', properties: { a: { type: 'string', maxLength: 3 }, b: { type: 'integer' } } };
    const result = fresh().validateArguments(key, schema, { a: 'SECRET-VALUE', b: 'also wrong' });
    expect(result).toEqual({
      valid: false,
      violation: { schemaPath: '#/properties/a/maxLength', instancePath: '/a', keyword: 'maxLength' },
    });
    expect(JSON.stringify(result)).not.toContain('SECRET');
  });

  it('honours own properties only: Object.prototype does not satisfy required', () => {
    const schema = { type: 'object', properties: { constructor: { type: 'string' } }, required: ['constructor'] };
    expect(fresh().validateArguments(key, schema, {})).toMatchObject({ valid: false, violation: { keyword: 'required' } });
    expect(fresh().validateArguments(key, schema, { constructor: 'c' })).toEqual({ valid: true, value: { constructor: 'c' } });
  });

  it('throws a SchemaAdmissionError for a schema that was never admissible', () => {
    expect(() => fresh().validateArguments(key, { type: 'object', properties: { a: { $ref: 'https://x.example/s' } } }, {})).toThrow(
      expect.objectContaining({ code: 'schema.remote_ref' }),
    );
  });
});

describe('compiled validator cache', () => {
  const schema = { type: 'object', properties: { a: { type: 'string' } } };

  it('compiles once per (tool, version)', () => {
    const validator = fresh();
    validator.validateArguments(key, schema, { a: 'x' });
    validator.validateArguments(key, schema, { a: 'y' });
    validator.validateArguments(key, structuredClone(schema), { a: 'z' });
    expect(validator.cacheStats().arguments).toEqual({ compilations: 1, hits: 2, size: 1 });
  });

  it('compiles again for another version', () => {
    const validator = fresh();
    validator.validateArguments(key, schema, { a: 'x' });
    validator.validateArguments({ ...key, toolVersion: '2' }, schema, { a: 'x' });
    expect(validator.cacheStats().arguments.compilations).toBe(2);
  });

  it('recompiles when a different schema arrives under the same key, rather than validating against a stale one', () => {
    const validator = fresh();
    expect(validator.validateArguments(key, schema, { a: 'x' })).toMatchObject({ valid: true });
    const changed = { type: 'object', properties: { a: { type: 'number' } } };
    expect(validator.validateArguments(key, changed, { a: 'x' })).toMatchObject({ valid: false });
    expect(validator.cacheStats().arguments).toEqual({ compilations: 2, hits: 0, size: 1 });
  });

  it('drops the least recently used validator beyond its bound', () => {
    const validator = new AjvSchemaValidator({ maxCachedValidators: 2 });
    validator.validateArguments({ toolName: 'demo.a', toolVersion: '1' }, schema, {});
    validator.validateArguments({ toolName: 'demo.b', toolVersion: '1' }, schema, {});
    validator.validateArguments({ toolName: 'demo.a', toolVersion: '1' }, schema, {});
    validator.validateArguments({ toolName: 'demo.c', toolVersion: '1' }, schema, {});
    expect(validator.cacheStats().arguments.size).toBe(2);
    validator.validateArguments({ toolName: 'demo.a', toolVersion: '1' }, schema, {});
    expect(validator.cacheStats().arguments.compilations).toBe(3);
    validator.validateArguments({ toolName: 'demo.b', toolVersion: '1' }, schema, {});
    expect(validator.cacheStats().arguments.compilations).toBe(4);
  });
});
