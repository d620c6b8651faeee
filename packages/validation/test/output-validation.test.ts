import { describe, expect, it } from 'vitest';
import { AjvSchemaValidator } from '../src/index';

const key = { toolName: 'demo.out', toolVersion: '1' };

describe('validateOutput', () => {
  it('accepts a conforming value and reports the first violation of a non-conforming one', () => {
    const validator = new AjvSchemaValidator();
    const schema = { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] };
    expect(validator.validateOutput(key, schema, { count: 3 })).toEqual({ valid: true });
    expect(validator.validateOutput(key, schema, { count: 'SECRET' })).toEqual({
      valid: false,
      violation: { schemaPath: '#/properties/count/type', instancePath: '/count', keyword: 'type' },
    });
  });

  it('takes the schema as written: no closing, no defaults, no mutation', () => {
    const validator = new AjvSchemaValidator();
    const schema = { type: 'object', properties: { a: { type: 'string', default: 'd' } } };
    const value = { extra: true };
    expect(validator.validateOutput(key, schema, value)).toEqual({ valid: true });
    expect(value).toEqual({ extra: true });
  });

  it('validates outputs that are not objects', () => {
    const validator = new AjvSchemaValidator();
    const schema = { type: 'array', items: { type: 'number' } };
    expect(validator.validateOutput(key, schema, [1, 2])).toEqual({ valid: true });
    expect(validator.validateOutput(key, schema, [1, 'x'])).toMatchObject({ valid: false, violation: { instancePath: '/1' } });
  });

  it('refuses a 10,000-deep output with keyword depth', () => {
    const validator = new AjvSchemaValidator();
    let value: unknown = 0;
    for (let i = 0; i < 10_000; i++) value = [value];
    expect(validator.validateOutput(key, {}, value)).toMatchObject({ valid: false, violation: { keyword: 'depth' } });
  });

  it('keeps its own cache, separate from the arguments cache', () => {
    const validator = new AjvSchemaValidator();
    const schema = { type: 'object' };
    validator.validateOutput(key, schema, {});
    validator.validateOutput(key, schema, {});
    validator.validateArguments(key, schema, {});
    const stats = validator.cacheStats();
    expect(stats.outputs).toEqual({ compilations: 1, hits: 1, size: 1 });
    expect(stats.arguments).toEqual({ compilations: 1, hits: 0, size: 1 });
  });
});
