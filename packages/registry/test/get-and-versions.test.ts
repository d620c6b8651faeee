import { describe, expect, it } from 'vitest';
import { ToolNotFoundError, VeetbotError } from '@veetbot/domain';
import { builtinSpec, dynamicOf, mcpSpec, newRegistry, toolOf } from './fixtures';

describe('get', () => {
  it('throws ToolNotFoundError for an unknown name or version', () => {
    const registry = newRegistry();
    registry.registerBuiltin(toolOf(builtinSpec()));
    expect(() => registry.get('workspace.nothing')).toThrow(ToolNotFoundError);
    expect(() => registry.get('workspace.read_text', '9')).toThrow(ToolNotFoundError);
    try {
      registry.get('workspace.nothing');
    } catch (error) {
      expect(VeetbotError.isInstance(error) && error.code).toBe('registry.tool_not_found');
    }
  });

  it('returns the registered spec (defaults applied) and routes execute to the tool', async () => {
    const registry = newRegistry();
    registry.registerBuiltin(toolOf(builtinSpec(), 'reader'));
    const tool = registry.get('workspace.read_text');
    expect(tool.spec).toMatchObject({
      kind: 'capability',
      target_kind: 'in_process',
      source: 'builtin',
      deprecated: false,
      model_visible: true,
    });
    expect(Object.isFrozen(tool.spec)).toBe(true);
    const result = await tool.execute({ path: 'a' }, {} as never);
    expect(result.content).toEqual([{ type: 'text', text: 'reader:{"path":"a"}' }]);
  });

  it('keeps versions side by side; without a version, the most recently registered one', async () => {
    const registry = newRegistry();
    await registry.registerDynamic([dynamicOf(mcpSpec({ version: 'catalog-b' }), 'b')], 'mcp');
    await registry.registerDynamic([dynamicOf(mcpSpec({ version: 'catalog-a' }), 'a')], 'mcp');
    // Registration order, not string order: catalog-a came last.
    expect(registry.get('mcp.acme.get_item').spec.version).toBe('catalog-a');
    expect(registry.get('mcp.acme.get_item', 'catalog-b').spec.version).toBe('catalog-b');
    expect(registry.versions('mcp.acme.get_item')).toEqual(['catalog-b', 'catalog-a']);
    // A rediscovered identical catalog becomes the most recent again.
    await registry.registerDynamic([dynamicOf(mcpSpec({ version: 'catalog-b' }), 'b')], 'mcp');
    expect(registry.get('mcp.acme.get_item').spec.version).toBe('catalog-b');
  });
});

describe('registerBuiltins', () => {
  it('is all or nothing: one broken builtin registers none and throws its code', () => {
    const registry = newRegistry();
    expect(() =>
      registry.registerBuiltins([
        toolOf(builtinSpec()),
        toolOf(builtinSpec({ name: 'mcp.acme.shadow' })),
        toolOf(builtinSpec({ name: 'workspace.list' })),
      ]),
    ).toThrow(expect.objectContaining({ code: 'registry.domain_reserved', toolName: 'mcp.acme.shadow' }));
    expect(() => registry.get('workspace.read_text')).toThrow(ToolNotFoundError);
  });

  it('refuses a duplicate within the list', () => {
    const registry = newRegistry();
    expect(() => registry.registerBuiltins([toolOf(builtinSpec()), toolOf(builtinSpec())])).toThrow(
      expect.objectContaining({ code: 'registry.duplicate' }),
    );
  });

  it('skips and reports builtins whose flag is off, registering the rest', () => {
    const registry = newRegistry({ flags: { AGENT_EMAIL_MODE_ENABLED: true } });
    const report = registry.registerBuiltins([
      toolOf(builtinSpec()),
      toolOf(builtinSpec({ name: 'email.context' })),
      toolOf(builtinSpec({ name: 'email.subscriptions' })),
    ]);
    expect(report.registered).toEqual(['workspace.read_text', 'email.context']);
    expect(report.skipped.map((s) => [s.name, s.code])).toEqual([['email.subscriptions', 'registry.flag_disabled']]);
    expect(() => registry.get('email.subscriptions')).toThrow(ToolNotFoundError);
  });

  it('still fails the build for a flagged-off builtin that breaks another rule', () => {
    const registry = newRegistry();
    expect(() => registry.registerBuiltins([toolOf(builtinSpec({ name: 'email.context', maximum_output_bytes: 10 ** 12 }))])).toThrow(
      expect.objectContaining({ code: 'registry.output_ceiling' }),
    );
  });
});

describe('construction', () => {
  it('refuses a global ceiling that is not a positive integer', () => {
    expect(() => newRegistry({ globalMaximumOutputBytes: 0 })).toThrow(expect.objectContaining({ code: 'config.output_ceiling_invalid' }));
  });
});
