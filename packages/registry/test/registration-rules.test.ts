import { describe, expect, it } from 'vitest';
import { RegistrationError, type ToolSpecInput } from '@veetbot/domain';
import type { DynamicTool } from '@veetbot/ports';
import { REGISTRATION_REASONS } from '../src/registration-codes';
import { builtinSpec, controlSpec, dynamicOf, GLOBAL_CEILING, mcpSpec, newRegistry, toolOf } from './fixtures';

/** Every code a test below saw refused; the last test checks each rule has one. */
const exercised = new Set<string>();

function refusedBuiltin(spec: ToolSpecInput, flags: Record<string, boolean> = {}): RegistrationError {
  const registry = newRegistry({ flags });
  let caught: unknown;
  try {
    registry.registerBuiltin(toolOf(spec));
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(RegistrationError);
  const error = caught as RegistrationError;
  exercised.add(error.code);
  // The registry holds nothing after a startup error.
  expect(() => registry.get(String(spec.name))).toThrow();
  return error;
}

function expectBuiltinCode(spec: ToolSpecInput, code: string, flags: Record<string, boolean> = {}): void {
  expect(refusedBuiltin(spec, flags).code).toBe(code);
}

async function dynamicRejection(tools: DynamicTool[], source: 'mcp' | 'device' | 'sandbox' | 'builtin') {
  const report = await newRegistry().registerDynamic(tools, source);
  for (const r of report.rejected) exercised.add(r.code);
  return report;
}

function accepted(spec: ToolSpecInput, flags: Record<string, boolean> = {}): void {
  const registry = newRegistry({ flags });
  registry.registerBuiltin(toolOf(spec));
  expect(registry.get(String(spec.name)).spec.name).toBe(spec.name);
}

describe('registration rules (Hard gate 1), one code each', () => {
  it('accepts the baseline declarations the other tests break', () => {
    accepted(builtinSpec());
    accepted(controlSpec());
  });

  it('registry.spec_invalid: a malformed spec names the field, never the value', () => {
    const error = refusedBuiltin(builtinSpec({ timeout_seconds: 'SECRET-VALUE' }));
    expect(error.code).toBe('registry.spec_invalid');
    expect(error.message).toContain('timeout_seconds');
    expect(error.message).not.toContain('SECRET');
    expect(refusedBuiltin(builtinSpec({ unexpected_field: 'SECRET' } as never)).message).not.toContain('SECRET');
    const registry = newRegistry();
    expect(() => registry.registerBuiltin({ spec: null as never, execute: async () => ({ ok: true, content: [] }) })).toThrow(
      expect.objectContaining({ code: 'registry.spec_invalid', toolName: '(unnamed)' }),
    );
  });

  it('registry.output_trust_missing', () => {
    const spec = builtinSpec();
    delete (spec as Partial<ToolSpecInput>).output_trust;
    expectBuiltinCode(spec, 'registry.output_trust_missing');
  });

  it.each([
    ['no dot', 'workspace'],
    ['a hyphen', 'workspace.read-text'],
    ['upper case', 'workspace.ReadText'],
    ['a leading digit', 'workspace.1read'],
    ['an empty segment', 'workspace..read'],
    ['97 characters', `workspace.${'a'.repeat(87)}`],
  ])('registry.name_invalid: %s', (_label, name) => {
    expectBuiltinCode(builtinSpec({ name }), 'registry.name_invalid');
  });

  it('accepts a name of exactly 96 characters', () => {
    const name = `workspace.${'a'.repeat(86)}`;
    expect(name).toHaveLength(96);
    accepted(builtinSpec({ name }));
  });

  it('registry.domain_reserved: a builtin in mcp or device is a startup error (Hard gate 10)', () => {
    expectBuiltinCode(builtinSpec({ name: 'mcp.acme.write_text' }), 'registry.domain_reserved');
    expectBuiltinCode(builtinSpec({ name: 'device.phone.locate' }), 'registry.domain_reserved');
  });

  it('registry.domain_unknown', () => {
    expectBuiltinCode(builtinSpec({ name: 'nosuchdomain.read' }), 'registry.domain_unknown');
  });

  it('registry.domain_partition: a capability in a control-only domain; an MCP tool outside mcp', async () => {
    expectBuiltinCode(builtinSpec({ name: 'conversation.chat' }), 'registry.domain_partition');
    const report = await dynamicRejection([dynamicOf(mcpSpec({ name: 'workspace.acme' }))], 'mcp');
    expect(report.rejected[0]?.code).toBe('registry.domain_partition');
  });

  it('registry.control_set: the five names are control, and only they', () => {
    expectBuiltinCode(controlSpec({ name: 'skill.load', kind: 'capability' }), 'registry.control_set');
    expectBuiltinCode(controlSpec({ name: 'skill.unload' }), 'registry.control_set');
  });

  it('registry.control_classification', () => {
    expectBuiltinCode(controlSpec({ side_effect: 'workspace_write' }), 'registry.control_classification');
    expectBuiltinCode(controlSpec({ idempotency: 'non_idempotent' }), 'registry.control_classification');
    accepted(controlSpec({ idempotency: 'read_only' }));
  });

  it('registry.control_target', () => {
    expectBuiltinCode(controlSpec({ target_kind: 'sandbox' }), 'registry.control_target');
  });

  it('registry.control_dynamic: no runtime path for a control tool, whatever its name', async () => {
    const report = await dynamicRejection([dynamicOf(mcpSpec({ kind: 'control', side_effect: 'none', idempotency: 'read_only' }))], 'mcp');
    expect(report.rejected.map((r) => r.code)).toEqual(['registry.control_dynamic']);
  });

  it('registry.source_builtin: registerDynamic refuses the builtin source for every tool, without throwing', async () => {
    const report = await dynamicRejection([dynamicOf(builtinSpec()), dynamicOf(builtinSpec({ name: 'workspace.list' }))], 'builtin');
    expect(report.registered).toEqual([]);
    expect(report.rejected.map((r) => [r.name, r.code])).toEqual([
      ['workspace.read_text', 'registry.source_builtin'],
      ['workspace.list', 'registry.source_builtin'],
    ]);
  });

  it('registry.source_invalid', async () => {
    const report = await newRegistry().registerDynamic([dynamicOf(mcpSpec())], 'plugin' as never);
    exercised.add(report.rejected[0]!.code);
    expect(report.rejected[0]?.code).toBe('registry.source_invalid');
  });

  it('registry.source_mismatch: a declaration claiming another source than its path', async () => {
    expectBuiltinCode(builtinSpec({ source: 'mcp' }), 'registry.source_mismatch');
    const report = await dynamicRejection([dynamicOf(mcpSpec({ source: 'device' }))], 'mcp');
    expect(report.rejected[0]?.code).toBe('registry.source_mismatch');
  });

  it('registry.source_conflict: a sandbox tool cannot shadow a builtin of the shared sandbox domain', async () => {
    const registry = newRegistry();
    registry.registerBuiltin(toolOf(builtinSpec({ name: 'sandbox.run_command', target_kind: 'sandbox' })));
    const report = await registry.registerDynamic(
      [dynamicOf(builtinSpec({ name: 'sandbox.run_command', version: '2', target_kind: 'sandbox' }))],
      'sandbox',
    );
    exercised.add(report.rejected[0]!.code);
    expect(report.rejected[0]?.code).toBe('registry.source_conflict');
    expect(registry.get('sandbox.run_command').spec.source).toBe('builtin');
  });

  it('registry.server_id: set exactly for MCP tools, and the name’s second segment', async () => {
    expectBuiltinCode(builtinSpec({ server_id: 'acme' }), 'registry.server_id');
    const report = await dynamicRejection(
      [
        dynamicOf(mcpSpec({ name: 'mcp.acme.a', server_id: 'other' })),
        dynamicOf(mcpSpec({ name: 'mcp.acme.b', server_id: null })),
        dynamicOf(mcpSpec({ name: 'mcp.acme', server_id: 'acme' })),
        dynamicOf(mcpSpec({ name: 'mcp.bad_ID.c', server_id: 'bad_ID' })),
      ],
      'mcp',
    );
    expect(report.rejected.map((r) => r.code)).toEqual([
      'registry.server_id',
      'registry.server_id',
      'registry.server_id',
      'registry.name_invalid',
    ]);
  });

  it('registry.device_id: set exactly for device tools', async () => {
    expectBuiltinCode(builtinSpec({ device_id: 'phone' }), 'registry.device_id');
    const report = await dynamicRejection(
      [dynamicOf(builtinSpec({ name: 'device.phone.locate', target_kind: 'device', required_scopes: [] }))],
      'device',
    );
    expect(report.rejected[0]?.code).toBe('registry.device_id');
  });

  it('registry.mcp_scope: an MCP tool requires only scopes under mcp.{server_id}', async () => {
    const report = await dynamicRejection(
      [
        dynamicOf(mcpSpec({ name: 'mcp.acme.a', required_scopes: ['session.write'] })),
        dynamicOf(mcpSpec({ name: 'mcp.acme.b', required_scopes: ['mcp.other.use'] })),
      ],
      'mcp',
    );
    expect(report.rejected.map((r) => r.code)).toEqual(['registry.mcp_scope', 'registry.mcp_scope']);
  });

  it('registry.model_visible: only an MCP tool may be hidden from the model', async () => {
    expectBuiltinCode(builtinSpec({ model_visible: false }), 'registry.model_visible');
    const report = await newRegistry().registerDynamic([dynamicOf(mcpSpec({ model_visible: false }))], 'mcp');
    expect(report.registered).toEqual(['mcp.acme.get_item']);
  });

  it('registry.target_source: mcp, device and sandbox targets only for their own sources', async () => {
    expectBuiltinCode(builtinSpec({ target_kind: 'mcp' }), 'registry.target_source');
    expectBuiltinCode(builtinSpec({ target_kind: 'device' }), 'registry.target_source');
    const report = await dynamicRejection([dynamicOf(mcpSpec({ target_kind: 'in_process' }))], 'mcp');
    expect(report.rejected[0]?.code).toBe('registry.target_source');
    accepted(builtinSpec({ name: 'sandbox.run_command', target_kind: 'sandbox' }));
  });

  describe('registry.target_web_provider', () => {
    const web = (overrides: Partial<Record<keyof ToolSpecInput, unknown>> = {}) =>
      builtinSpec({
        name: 'web.fetch',
        target_kind: 'web_provider',
        side_effect: 'network_read',
        idempotency: 'read_only',
        output_trust: 'external_untrusted',
        ...overrides,
      });

    it('accepts network_read, read_only, external_untrusted', () => {
      accepted(web());
    });

    it.each([
      ['another side effect', { side_effect: 'external_read' }],
      ['another idempotency', { idempotency: 'idempotent' }],
      ['another output trust', { output_trust: 'internal_tool' }],
    ])('refuses %s', (_label, overrides) => {
      expectBuiltinCode(web(overrides), 'registry.target_web_provider');
    });
  });

  describe('registry.target_unsubscribe, pinned both ways', () => {
    const flags = { AGENT_EMAIL_UNSUBSCRIBE_ENABLED: true };
    const unsubscribe = (overrides: Partial<Record<keyof ToolSpecInput, unknown>> = {}) =>
      builtinSpec({
        name: 'email.unsubscribe',
        target_kind: 'unsubscribe_endpoint',
        side_effect: 'external_write',
        risk: 'medium',
        idempotency: 'idempotent',
        allow_parallel: false,
        ...overrides,
      });

    it('accepts email.unsubscribe with its target and classification', () => {
      accepted(unsubscribe(), flags);
    });

    it('refuses the name with any other target', () => {
      expectBuiltinCode(unsubscribe({ target_kind: 'in_process' }), 'registry.target_unsubscribe', flags);
      expectBuiltinCode(unsubscribe({ target_kind: 'web_provider' }), 'registry.target_unsubscribe', flags);
    });

    it('refuses the target for any other name', () => {
      expectBuiltinCode(unsubscribe({ name: 'email.subscriptions' }), 'registry.target_unsubscribe', flags);
      expectBuiltinCode(unsubscribe({ name: 'web.fetch' }), 'registry.target_unsubscribe', flags);
    });

    it.each([
      ['another side effect', { side_effect: 'network_read' }],
      ['another risk', { risk: 'high' }],
      ['another idempotency', { idempotency: 'non_idempotent' }],
      ['parallelism', { allow_parallel: true }],
    ])('refuses the pair with %s', (_label, overrides) => {
      expectBuiltinCode(unsubscribe(overrides), 'registry.target_unsubscribe', flags);
    });
  });

  it('registry.output_ceiling: above the global ceiling is an error, not a clamp', () => {
    accepted(builtinSpec({ maximum_output_bytes: GLOBAL_CEILING }));
    const error = refusedBuiltin(builtinSpec({ maximum_output_bytes: GLOBAL_CEILING + 1 }));
    expect(error.code).toBe('registry.output_ceiling');
    expect(error.message).toContain(String(GLOBAL_CEILING));
  });

  it('registry.spec_canonical: a spec that could never be hashed into a pin', () => {
    expectBuiltinCode(builtinSpec({ description: 'lone \ud800 surrogate' }), 'registry.spec_canonical');
    expectBuiltinCode(
      builtinSpec({ input_schema: { type: 'object', properties: { n: { type: 'number', minimum: -0 } } } }),
      'registry.spec_canonical',
    );
  });

  it('registry.flag_disabled: a flagged domain registers only when its flag is on', () => {
    expectBuiltinCode(builtinSpec({ name: 'email.context' }), 'registry.flag_disabled');
    accepted(builtinSpec({ name: 'email.context' }), { AGENT_EMAIL_MODE_ENABLED: true });
    // § Milestone 31: the unsubscribe pair answers to its own flag, not the Email-mode one.
    expectBuiltinCode(builtinSpec({ name: 'email.subscriptions' }), 'registry.flag_disabled', { AGENT_EMAIL_MODE_ENABLED: true });
    accepted(builtinSpec({ name: 'email.subscriptions' }), { AGENT_EMAIL_UNSUBSCRIBE_ENABLED: true });
    // Any other email tool takes the domain gate: either flag.
    accepted(builtinSpec({ name: 'email.other' }), { AGENT_EMAIL_UNSUBSCRIBE_ENABLED: true });
    expectBuiltinCode(builtinSpec({ name: 'people.lookup' }), 'registry.flag_disabled');
  });

  it('registry.duplicate: one name and version register once', () => {
    const registry = newRegistry();
    registry.registerBuiltin(toolOf(builtinSpec()));
    expect(() => registry.registerBuiltin(toolOf(builtinSpec()))).toThrow(expect.objectContaining({ code: 'registry.duplicate' }));
    exercised.add('registry.duplicate');
    registry.registerBuiltin(toolOf(builtinSpec({ version: '2' })));
    expect(registry.versions('workspace.read_text')).toEqual(['1', '2']);
  });

  it('registry.limits_invalid: a route limit the executor cannot fold into the effective timeout (docs/adr/0025)', async () => {
    for (const requestTimeoutSeconds of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '30' as unknown as number]) {
      const report = await dynamicRejection([{ ...dynamicOf(mcpSpec()), limits: { requestTimeoutSeconds } }], 'mcp');
      expect(report.rejected.map((r) => r.code)).toEqual(['registry.limits_invalid']);
    }
    expect(() => newRegistry().registerBuiltin({ ...toolOf(builtinSpec()), limits: { requestTimeoutSeconds: -5 } })).toThrow(
      expect.objectContaining({ code: 'registry.limits_invalid' }),
    );
    // A valid limit is kept with the route: the executor reads it from the resolved tool.
    const registry = newRegistry();
    const report = await registry.registerDynamic([{ ...dynamicOf(mcpSpec()), limits: { requestTimeoutSeconds: 2.5 } }], 'mcp');
    expect(report.registered).toEqual(['mcp.acme.get_item']);
    expect(registry.get('mcp.acme.get_item').limits).toEqual({ requestTimeoutSeconds: 2.5 });
  });

  it('registry.batch_conflict: two declarations of one name in one dynamic batch, neither registered', async () => {
    const report = await dynamicRejection(
      [dynamicOf(mcpSpec()), dynamicOf(mcpSpec({ description: 'other' })), dynamicOf(mcpSpec({ name: 'mcp.acme.ok' }))],
      'mcp',
    );
    expect(report.registered).toEqual(['mcp.acme.ok']);
    expect(report.rejected.map((r) => [r.name, r.code])).toEqual([
      ['mcp.acme.get_item', 'registry.batch_conflict'],
      ['mcp.acme.get_item', 'registry.batch_conflict'],
    ]);
  });

  describe('schema admission codes pass through', () => {
    it.each([
      ['schema.remote_ref', { type: 'object', properties: { a: { $ref: 'https://example.com/a.json' } } }],
      ['schema.dialect_unsupported', { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' }],
      ['schema.too_deep', { type: 'object', not: JSON.parse(`${'{"not":'.repeat(20)}{}${'}'.repeat(20)}`) }],
      ['schema.too_large', { type: 'object', description: 'x'.repeat(40_000) }],
      ['schema.invalid', { type: 'object', properties: { a: { type: 'nope' } } }],
      ['schema.not_object', { type: 'string' }],
    ])('%s on input_schema', (code, input_schema) => {
      const error = refusedBuiltin(builtinSpec({ input_schema }));
      expect(error.code).toBe(code);
      expect(error.message).toMatch(/^input_schema: /);
    });

    it('checks output_schema too, without requiring an object', () => {
      accepted(builtinSpec({ output_schema: { type: 'array' } }));
      const error = refusedBuiltin(builtinSpec({ output_schema: { $ref: 'other.json' } }));
      expect(error.code).toBe('schema.remote_ref');
      expect(error.message).toMatch(/^output_schema: /);
    });

    it('rejects a dynamic tool with a remote $ref in the report, not by throwing', async () => {
      const report = await dynamicRejection(
        [dynamicOf(mcpSpec({ input_schema: { type: 'object', properties: { a: { $ref: 'http://x/y' } } } }))],
        'mcp',
      );
      expect(report.rejected[0]?.code).toBe('schema.remote_ref');
    });
  });

  it('every registry.* rule above has a test', () => {
    const missing = Object.keys(REGISTRATION_REASONS).filter((code) => !exercised.has(code));
    expect(missing).toEqual([]);
  });
});
