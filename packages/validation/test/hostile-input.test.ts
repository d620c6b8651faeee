import { afterEach, describe, expect, it } from 'vitest';
import { AjvSchemaValidator } from '../src/index';
import { INSTANCE_MAX_DEPTH } from '../src/limits';

const key = { toolName: 'demo.hostile', toolVersion: '1' };
const validator = new AjvSchemaValidator();

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

afterEach(() => {
  // Nothing a test does may leave a trace on Object.prototype.
  expect(Object.keys(Object.prototype)).toEqual([]);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

describe('a 10 MB argument string', () => {
  const huge = 'x'.repeat(10 * 1024 * 1024);

  it('is refused by maxLength quickly', () => {
    const started = performance.now();
    const result = validator.validateArguments(
      key,
      { type: 'object', properties: { s: { type: 'string', maxLength: 1000 } } },
      { s: huge },
    );
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(result).toEqual({
      valid: false,
      violation: { schemaPath: '#/properties/s/maxLength', instancePath: '/s', keyword: 'maxLength' },
    });
  });

  it('passes an unbounded string schema intact, and a linear pattern does not hang', () => {
    const schema = { type: 'object', properties: { s: { type: 'string', pattern: '^x+$' } } };
    const started = performance.now();
    const result = validator.validateArguments({ ...key, toolName: 'demo.pattern' }, schema, { s: huge });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(result.valid && result.value.s === huge).toBe(true);
  });

  it('as a key, is not carried back whole in the violation pointer', () => {
    const schema = { type: 'object', properties: {}, additionalProperties: { type: 'number' } };
    const result = validator.validateArguments({ ...key, toolName: 'demo.keys' }, schema, { [huge]: 'not a number' });
    expect(result.valid).toBe(false);
    expect(JSON.stringify(result).length).toBeLessThan(1_000);
  });
});

describe('deep nesting', () => {
  const open = { type: 'object', additionalProperties: true };

  it(`admits ${INSTANCE_MAX_DEPTH} levels and refuses one more with keyword depth`, () => {
    expect(validator.validateArguments({ ...key, toolName: 'demo.open' }, open, nested(INSTANCE_MAX_DEPTH - 1))).toMatchObject({
      valid: true,
    });
    const result = validator.validateArguments({ ...key, toolName: 'demo.open' }, open, nested(INSTANCE_MAX_DEPTH));
    expect(result).toMatchObject({ valid: false, violation: { schemaPath: '#', keyword: 'depth' } });
  });

  it('refuses 10,000 levels (parsed from JSON) without a stack overflow', () => {
    const text = `${'{"a":'.repeat(10_000)}{}${'}'.repeat(10_000)}`;
    const result = validator.validateArguments({ ...key, toolName: 'demo.open' }, open, JSON.parse(text));
    expect(result).toMatchObject({ valid: false, violation: { keyword: 'depth' } });
  });

  it('refuses 10,000 levels against a recursive schema that ajv would follow', () => {
    const recursive = { type: 'object', properties: { a: { $ref: '#' } } };
    const result = validator.validateArguments({ ...key, toolName: 'demo.recursive' }, recursive, nested(10_000));
    expect(result).toMatchObject({ valid: false, violation: { keyword: 'depth' } });
  });

  it('refuses 10,000 nested arrays', () => {
    let value: unknown = [];
    for (let i = 0; i < 10_000; i++) value = [value];
    const result = validator.validateArguments({ ...key, toolName: 'demo.open' }, open, { a: value });
    expect(result).toMatchObject({ valid: false, violation: { keyword: 'depth' } });
  });
});

describe('keys named after the prototype', () => {
  const open = { type: 'object', additionalProperties: true };

  it('keeps __proto__ from JSON as an own key and pollutes nothing', () => {
    const args = JSON.parse('{"__proto__": {"polluted": true}, "b": 1}') as Record<string, unknown>;
    const result = validator.validateArguments({ ...key, toolName: 'demo.open' }, open, args);
    if (!result.valid) throw new Error('expected valid');
    expect(Object.keys(result.value)).toEqual(['__proto__', 'b']);
    expect(Object.getPrototypeOf(result.value)).toBe(Object.prototype);
    expect((result.value as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(result.value, '__proto__')?.value).toEqual({ polluted: true });
  });

  it('treats constructor.prototype as ordinary data', () => {
    const args = JSON.parse('{"constructor": {"prototype": {"polluted": true}}}') as Record<string, unknown>;
    const result = validator.validateArguments({ ...key, toolName: 'demo.open' }, open, args);
    expect(result).toMatchObject({ valid: true });
    expect(({} as { constructor: unknown }).constructor).toBe(Object);
  });

  it('rejects __proto__ as an unknown argument when the schema is closed', () => {
    const closed = { type: 'object', properties: { b: { type: 'number' } } };
    const args = JSON.parse('{"__proto__": {"polluted": true}, "b": 1}') as Record<string, unknown>;
    expect(validator.validateArguments({ ...key, toolName: 'demo.closed' }, closed, args)).toMatchObject({
      valid: false,
      violation: { keyword: 'unevaluatedProperties' },
    });
  });

  it('refuses a schema declaring a property named __proto__ (ajv would skip it unchecked)', () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"object","default":{"polluted":true}}}}') as Record<
      string,
      unknown
    >;
    expect(validator.admit(schema)).toMatchObject({ ok: false, code: 'schema.invalid' });
    expect(() => validator.validateArguments({ ...key, toolName: 'demo.proto_default' }, schema, {})).toThrow(
      expect.objectContaining({ code: 'schema.invalid' }),
    );
  });

  it('admits and validates schema property names constructor and toString', () => {
    const schema = { type: 'object', properties: { constructor: { type: 'string' }, toString: { type: 'string', default: 't' } } };
    expect(validator.admit(schema, { requireObject: true })).toEqual({ ok: true });
    const result = validator.validateArguments({ ...key, toolName: 'demo.proto_names' }, schema, {});
    expect(result).toEqual({ valid: true, value: { toString: 't' } });
    expect(validator.validateArguments({ ...key, toolName: 'demo.proto_names' }, schema, { constructor: 5 })).toMatchObject({
      valid: false,
      violation: { instancePath: '/constructor', keyword: 'type' },
    });
  });
});

describe('values that are not JSON', () => {
  const open = { type: 'object', additionalProperties: true };

  it.each([
    ['a function', { f: () => 1 }, '/f'],
    ['a bigint', { n: 1n }, '/n'],
    ['a symbol', { s: Symbol('s') }, '/s'],
    ['undefined', { u: undefined }, '/u'],
    ['a Date', { d: new Date() }, '/d'],
    ['a Map', { m: new Map() }, '/m'],
  ])('refuses %s with keyword type', (_label, args, instancePath) => {
    expect(validator.validateArguments({ ...key, toolName: 'demo.open' }, open, args)).toEqual({
      valid: false,
      violation: { schemaPath: '#', instancePath, keyword: 'type' },
    });
  });

  it('refuses a cycle without looping', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(validator.validateArguments({ ...key, toolName: 'demo.open' }, open, cyclic)).toMatchObject({
      valid: false,
      violation: { keyword: 'type' },
    });
  });

  it('refuses shared references, whose walk could be exponential', () => {
    let shared: Record<string, unknown> = {};
    for (let i = 0; i < 60; i++) shared = { l: shared, r: shared };
    const started = performance.now();
    const result = validator.validateArguments({ ...key, toolName: 'demo.open' }, open, shared);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(result).toMatchObject({ valid: false, violation: { keyword: 'type' } });
  });
});
