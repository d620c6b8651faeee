import { describe, expect, it } from 'vitest';
import { TRUST_ORDER, type ToolSpecInput } from '@veetbot/domain';
import { builtinSpec, dynamicOf, mcpSpec, newRegistry } from './fixtures';

const deviceSpec = (overrides: Partial<Record<keyof ToolSpecInput, unknown>> = {}) =>
  builtinSpec({ name: 'device.phone.locate', version: 'd1', target_kind: 'device', device_id: 'phone', required_scopes: [], ...overrides });
const sandboxSpec = (overrides: Partial<Record<keyof ToolSpecInput, unknown>> = {}) =>
  builtinSpec({ name: 'sandbox.user_script', version: 's1', target_kind: 'sandbox', ...overrides });

describe('forced output trust (Hard gate 2)', () => {
  const cases = [
    ['mcp', (trust: unknown) => mcpSpec({ output_trust: trust })],
    ['device', (trust: unknown) => deviceSpec({ output_trust: trust })],
    ['sandbox', (trust: unknown) => sandboxSpec({ output_trust: trust })],
  ] as const;

  it.each(cases)('overwrites every declared trust with external_untrusted for source %s', async (source, make) => {
    for (const declared of TRUST_ORDER) {
      const registry = newRegistry();
      const report = await registry.registerDynamic([dynamicOf(make(declared))], source);
      expect(report.rejected).toEqual([]);
      const [name] = report.registered;
      expect(registry.get(name!).spec.output_trust).toBe('external_untrusted');
      expect(registry.get(name!).spec.source).toBe(source);
    }
  });

  it.each(cases)('supplies external_untrusted when a %s declaration omits it', async (source, make) => {
    const spec = make(undefined);
    delete (spec as Partial<ToolSpecInput>).output_trust;
    const registry = newRegistry();
    const report = await registry.registerDynamic([dynamicOf(spec)], source);
    expect(registry.get(report.registered[0]!).spec.output_trust).toBe('external_untrusted');
  });

  it('forces allow_parallel false for MCP tools (v0.1)', async () => {
    const registry = newRegistry();
    await registry.registerDynamic([dynamicOf(mcpSpec({ allow_parallel: true }))], 'mcp');
    expect(registry.get('mcp.acme.get_item').spec.allow_parallel).toBe(false);
  });

  it('does not let the caller mutate the registered spec afterwards', async () => {
    const registry = newRegistry();
    const spec = mcpSpec();
    await registry.registerDynamic([dynamicOf(spec)], 'mcp');
    (spec as Record<string, unknown>).output_trust = 'platform';
    (spec.input_schema as Record<string, unknown>).type = 'string';
    const registered = registry.get('mcp.acme.get_item').spec;
    expect(registered.output_trust).toBe('external_untrusted');
    expect(registered.input_schema.type).toBe('object');
    expect(Object.isFrozen(registered.input_schema)).toBe(true);
  });
});

describe('the registration report', () => {
  it('lists every registered name and every rejection with code and reason, and never throws', async () => {
    const registry = newRegistry();
    const report = await registry.registerDynamic(
      [
        dynamicOf(mcpSpec({ name: 'mcp.acme.search' })),
        dynamicOf(mcpSpec({ name: 'mcp.acme.Bad-Name' })),
        dynamicOf(mcpSpec({ name: 'mcp.acme.huge', maximum_output_bytes: 10 ** 9 })),
        dynamicOf(mcpSpec({ name: 'mcp.acme.remote', input_schema: { type: 'object', $ref: 'https://evil.example/SECRET' } })),
        dynamicOf(mcpSpec({ name: 'mcp.acme.fetch' })),
        dynamicOf(mcpSpec({ name: 'mcp.acme.typo', timeout_seconds: 'SECRET-VALUE' })),
      ],
      'mcp',
    );
    expect(report.source).toBe('mcp');
    expect(report.registered).toEqual(['mcp.acme.search', 'mcp.acme.fetch']);
    expect(report.rejected.map((r) => [r.name, r.code])).toEqual([
      ['mcp.acme.Bad-Name', 'registry.name_invalid'],
      ['mcp.acme.huge', 'registry.output_ceiling'],
      ['mcp.acme.remote', 'schema.remote_ref'],
      ['mcp.acme.typo', 'registry.spec_invalid'],
    ]);
    for (const rejection of report.rejected) expect(rejection.reason.length).toBeGreaterThan(0);
    expect(JSON.stringify(report)).not.toContain('SECRET');
    expect(registry.get('mcp.acme.search').spec.name).toBe('mcp.acme.search');
    expect(() => registry.get('mcp.acme.huge')).toThrow();
  });

  it('bounds a hostile declared name in the report', async () => {
    const report = await newRegistry().registerDynamic([dynamicOf(mcpSpec({ name: `mcp.acme.${'x'.repeat(10_000)}` }))], 'mcp');
    expect(report.rejected[0]?.code).toBe('registry.name_invalid');
    expect(report.rejected[0]!.name.length).toBeLessThan(200);
  });

  it('accepts device tools in device. and sandbox tools in sandbox.', async () => {
    const registry = newRegistry();
    expect((await registry.registerDynamic([dynamicOf(deviceSpec())], 'device')).registered).toEqual(['device.phone.locate']);
    expect((await registry.registerDynamic([dynamicOf(sandboxSpec())], 'sandbox')).registered).toEqual(['sandbox.user_script']);
    const wrongDomain = await registry.registerDynamic([dynamicOf(deviceSpec({ name: 'workspace.locate' }))], 'device');
    expect(wrongDomain.rejected[0]?.code).toBe('registry.domain_partition');
  });
});

describe('re-registration', () => {
  it('accepts an identical re-registration (a rediscovered catalog) and routes to the new callable', async () => {
    const registry = newRegistry();
    await registry.registerDynamic([dynamicOf(mcpSpec(), 'first-connection')], 'mcp');
    const again = await registry.registerDynamic([dynamicOf(mcpSpec(), 'second-connection')], 'mcp');
    expect(again).toEqual({ source: 'mcp', registered: ['mcp.acme.get_item'], rejected: [] });
    const result = await registry.get('mcp.acme.get_item').execute({}, {} as never);
    expect(result.content).toEqual([{ type: 'text', text: 'second-connection:{}' }]);
  });

  it('refuses a different spec under a name and version already held', async () => {
    const registry = newRegistry();
    await registry.registerDynamic([dynamicOf(mcpSpec())], 'mcp');
    const changed = await registry.registerDynamic([dynamicOf(mcpSpec({ description: 'changed without a new catalog hash' }))], 'mcp');
    expect(changed.rejected.map((r) => r.code)).toEqual(['registry.duplicate']);
    expect(registry.get('mcp.acme.get_item').spec.description).toBe(builtinSpec().description);
  });
});
