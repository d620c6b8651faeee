import { describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex, type ToolSpecInput } from '@veetbot/domain';
import type { InMemoryToolRegistry } from '../src/index';
import { advertised } from '../src/specs-for-session';
import {
  builtinSpec,
  controlSpec,
  dynamicOf,
  everyAgent,
  fullEnvironment,
  mcpSpec,
  newRegistry,
  policyDenying,
  principal,
  toolOf,
} from './fixtures';

const allowAll = policyDenying();

const builtins: ToolSpecInput[] = [
  builtinSpec({ name: 'workspace.read_text' }),
  builtinSpec({
    name: 'workspace.write_text',
    side_effect: 'workspace_write',
    idempotency: 'idempotent',
    required_scopes: ['workspace.write'],
  }),
  builtinSpec({
    name: 'web.search',
    target_kind: 'web_provider',
    side_effect: 'network_read',
    output_trust: 'external_untrusted',
    required_scopes: ['web.read'],
  }),
  builtinSpec({
    name: 'sandbox.run_command',
    target_kind: 'sandbox',
    side_effect: 'workspace_write',
    idempotency: 'non_idempotent',
    required_scopes: [],
  }),
  controlSpec(),
];

async function populated(order: 'forward' | 'reverse' = 'forward'): Promise<InMemoryToolRegistry> {
  const registry = newRegistry();
  const list = order === 'forward' ? builtins : [...builtins].reverse();
  for (const spec of list) registry.registerBuiltin(toolOf(spec));
  await registry.registerDynamic([dynamicOf(mcpSpec())], 'mcp');
  return registry;
}

function names(
  registry: InMemoryToolRegistry,
  overrides: { agent?: object; principal?: object; policy?: ReturnType<typeof policyDenying>; environment?: object } = {},
) {
  return registry.specsForSession(
    { ...everyAgent, ...overrides.agent },
    { ...principal, ...overrides.principal },
    overrides.policy ?? allowAll,
    { ...fullEnvironment, ...overrides.environment },
  ).toolNames;
}

const ALL = [
  'conversation.ask_user',
  'mcp.acme.get_item',
  'sandbox.run_command',
  'web.search',
  'workspace.read_text',
  'workspace.write_text',
];

describe('the four filters', () => {
  it('offers everything to an agent, principal, profile and environment that allow everything, sorted by name', async () => {
    expect(names(await populated())).toEqual(ALL);
  });

  it('agent: exact names and domain.* patterns', async () => {
    const registry = await populated();
    expect(names(registry, { agent: { enabledTools: ['web.search', 'workspace.*'] } })).toEqual([
      'web.search',
      'workspace.read_text',
      'workspace.write_text',
    ]);
    expect(names(registry, { agent: { enabledTools: ['mcp.acme.*'] } })).toEqual(['mcp.acme.get_item']);
    expect(names(registry, { agent: { enabledTools: [] } })).toEqual([]);
  });

  it('principal: every required scope held (wildcards included)', async () => {
    const registry = await populated();
    expect(names(registry, { principal: { scopes: ['workspace.read', 'mcp.acme.use'] } })).toEqual([
      'conversation.ask_user',
      'mcp.acme.get_item',
      'sandbox.run_command',
      'workspace.read_text',
    ]);
  });

  it('policy: a profile that does not offer a tool removes it', async () => {
    expect(names(await populated(), { policy: policyDenying('sandbox.run_command', 'web.search') })).toEqual(
      ALL.filter((n) => n !== 'sandbox.run_command' && n !== 'web.search'),
    );
  });

  it('environment: target kinds the runtime can route', async () => {
    expect(names(await populated(), { environment: { targetKinds: ['in_process', 'mcp'] } })).toEqual([
      'conversation.ask_user',
      'mcp.acme.get_item',
      'workspace.read_text',
      'workspace.write_text',
    ]);
  });

  it('environment: MCP servers this session may pin', async () => {
    const registry = await populated();
    await registry.registerDynamic([dynamicOf(mcpSpec({ name: 'mcp.beta.list', server_id: 'beta', required_scopes: [] }))], 'mcp');
    expect(names(registry, { environment: { mcpServers: ['beta'] } })).toEqual(
      [...ALL.filter((n) => n !== 'mcp.acme.get_item'), 'mcp.beta.list'].sort(),
    );
  });

  it('environment: deployment flags', async () => {
    const registry = newRegistry({ flags: { AGENT_EMAIL_MODE_ENABLED: true } });
    registry.registerBuiltin(toolOf(builtinSpec({ name: 'email.context', required_scopes: [] })));
    expect(names(registry, { environment: { flags: { AGENT_EMAIL_MODE_ENABLED: true } } })).toEqual(['email.context']);
    expect(names(registry, { environment: { flags: {} } })).toEqual([]);
  });

  it('excludes deprecated tools from new pins, which stay callable', async () => {
    const registry = await populated();
    registry.registerBuiltin(toolOf(builtinSpec({ name: 'workspace.old', deprecated: true })));
    expect(names(registry)).toEqual(ALL);
    expect(registry.get('workspace.old').spec.deprecated).toBe(true);
  });

  it('pins only the latest version of each name', async () => {
    const registry = await populated();
    await registry.registerDynamic([dynamicOf(mcpSpec({ version: 'catalog-bbbb' }))], 'mcp');
    const pinned = registry.specsForSession(everyAgent, principal, allowAll, fullEnvironment);
    expect(pinned.specs.filter((s) => s.name === 'mcp.acme.get_item').map((s) => s.version)).toEqual(['catalog-bbbb']);
  });
});

describe('tool_schema_sha256', () => {
  it('is sha256 of the canonical JSON of the full spec list', async () => {
    const pinned = (await populated()).specsForSession(everyAgent, principal, allowAll, fullEnvironment);
    expect(pinned.toolSchemaSha256).toBe(sha256Hex(canonicalJson(pinned.specs)));
    expect(pinned.toolSchemaSha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is the same whatever the registration order', async () => {
    const a = (await populated('forward')).specsForSession(everyAgent, principal, allowAll, fullEnvironment);
    const b = (await populated('reverse')).specsForSession(everyAgent, principal, allowAll, fullEnvironment);
    expect(b.toolSchemaSha256).toBe(a.toolSchemaSha256);
    expect(b.toolNames).toEqual(a.toolNames);
  });

  it('changes when any spec changes', async () => {
    const a = (await populated()).specsForSession(everyAgent, principal, allowAll, fullEnvironment);
    const registry = await populated();
    await registry.registerDynamic([dynamicOf(mcpSpec({ version: 'catalog-bbbb' }))], 'mcp');
    expect(registry.specsForSession(everyAgent, principal, allowAll, fullEnvironment).toolSchemaSha256).not.toBe(a.toolSchemaSha256);
  });
});

describe('pinned sets stay addressable', () => {
  it('returns the same set by hash after later registrations, and the pinned versions still resolve', async () => {
    const registry = await populated();
    const first = registry.specsForSession(everyAgent, principal, allowAll, fullEnvironment);
    // A catalog change mid-session registers a new version; the pinned set does not move.
    await registry.registerDynamic([dynamicOf(mcpSpec({ version: 'catalog-bbbb' }))], 'mcp');
    registry.registerBuiltin(toolOf(builtinSpec({ name: 'workspace.list' })));
    const second = registry.specsForSession(everyAgent, principal, allowAll, fullEnvironment);
    expect(second.toolSchemaSha256).not.toBe(first.toolSchemaSha256);

    const again = registry.pinned(first.toolSchemaSha256);
    expect(again).toBe(first);
    expect(again?.toolNames).toEqual(ALL);
    const pinnedMcp = again!.specs.find((s) => s.name === 'mcp.acme.get_item')!;
    expect(registry.get(pinnedMcp.name, pinnedMcp.version).spec.version).toBe('catalog-aaaa');
    expect(registry.pinned(second.toolSchemaSha256)).toBe(second);
  });

  it('returns undefined for a hash it never pinned', async () => {
    expect((await populated()).pinned('0'.repeat(64))).toBeUndefined();
  });

  it('cannot be changed by its holder', async () => {
    const pinned = (await populated()).specsForSession(everyAgent, principal, allowAll, fullEnvironment);
    expect(Object.isFrozen(pinned.specs)).toBe(true);
    expect(Object.isFrozen(pinned.specs[0])).toBe(true);
    expect(() => (pinned.specs as unknown[]).push(1)).toThrow();
  });
});

describe('model_visible', () => {
  it('pins an application-only MCP tool (callable) but does not advertise it', async () => {
    const registry = await populated();
    await registry.registerDynamic([dynamicOf(mcpSpec({ name: 'mcp.acme.sync_mail', model_visible: false }))], 'mcp');
    const pinned = registry.specsForSession(everyAgent, principal, allowAll, fullEnvironment);
    expect(pinned.toolNames).toContain('mcp.acme.sync_mail');
    expect(advertised(pinned).map((s) => s.name)).toEqual(ALL);
    expect(registry.get('mcp.acme.sync_mail').spec.model_visible).toBe(false);
  });
});
