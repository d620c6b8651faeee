import { describe, expect, expectTypeOf, it } from 'vitest';
import type { SchemaValidator } from '@veetbot/ports';
import { AjvSchemaValidator } from '@veetbot/validation';
import { InMemoryToolRegistry } from '../src/index';
import { builtinSpec, toolOf } from './fixtures';

// validation may not import ports (the boundary table), so it restates the port's shapes;
// this is where the two are held together.
const asPort: SchemaValidator = new AjvSchemaValidator();

describe('AjvSchemaValidator as ports.SchemaValidator', () => {
  it('is assignable at the type level', () => {
    expectTypeOf<AjvSchemaValidator>().toExtend<SchemaValidator>();
    expectTypeOf<ReturnType<AjvSchemaValidator['validateArguments']>>().toEqualTypeOf<ReturnType<SchemaValidator['validateArguments']>>();
    expectTypeOf<ReturnType<AjvSchemaValidator['validateOutput']>>().toEqualTypeOf<ReturnType<SchemaValidator['validateOutput']>>();
    expectTypeOf<ReturnType<AjvSchemaValidator['admit']>>().toEqualTypeOf<ReturnType<SchemaValidator['admit']>>();
  });

  it('serves the registry through the port', () => {
    const registry = new InMemoryToolRegistry({ validator: asPort, globalMaximumOutputBytes: 1024 * 1024 });
    registry.registerBuiltin(toolOf(builtinSpec()));
    expect(
      asPort.validateArguments(
        { toolName: 'workspace.read_text', toolVersion: '1' },
        registry.get('workspace.read_text').spec.input_schema,
        { path: 'a' },
      ),
    ).toEqual({
      valid: true,
      value: { path: 'a' },
    });
  });
});
