import type { Principal, ToolSpecInput } from '@veetbot/domain';
import type { AgentSpec, DynamicTool, PolicyEngine, RuntimeEnvironment, Tool } from '@veetbot/ports';
import { AjvSchemaValidator } from '@veetbot/validation';
import { InMemoryToolRegistry } from '../src/index';
import type { ToolRegistryOptions } from '../src/in-memory-tool-registry';

export const GLOBAL_CEILING = 1_048_576;

/** A valid builtin declaration; tests override one field to break one rule. */
export function builtinSpec(overrides: Partial<Record<keyof ToolSpecInput, unknown>> = {}): ToolSpecInput {
  return {
    name: 'workspace.read_text',
    version: '1',
    description: 'Reads a text file from the run workspace.',
    input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    output_schema: null,
    side_effect: 'workspace_read',
    risk: 'low',
    idempotency: 'read_only',
    required_scopes: ['workspace.read'],
    timeout_seconds: 30,
    maximum_output_bytes: 65_536,
    allow_parallel: true,
    output_trust: 'internal_tool',
    ...overrides,
  } as ToolSpecInput;
}

/** A control tool that passes every rule. */
export function controlSpec(overrides: Partial<Record<keyof ToolSpecInput, unknown>> = {}): ToolSpecInput {
  return builtinSpec({
    name: 'conversation.ask_user',
    kind: 'control',
    side_effect: 'none',
    idempotency: 'idempotent',
    required_scopes: [],
    allow_parallel: false,
    output_trust: 'user',
    ...overrides,
  });
}

export function mcpSpec(overrides: Partial<Record<keyof ToolSpecInput, unknown>> = {}): ToolSpecInput {
  return builtinSpec({
    name: 'mcp.acme.get_item',
    version: 'catalog-aaaa',
    source: 'mcp',
    server_id: 'acme',
    target_kind: 'mcp',
    side_effect: 'external_write',
    risk: 'high',
    idempotency: 'non_idempotent',
    required_scopes: ['mcp.acme.use'],
    allow_parallel: false,
    output_trust: 'external_untrusted',
    ...overrides,
  });
}

/** A Tool whose execute echoes its arguments: enough to prove get() routes to it. */
export function toolOf(spec: ToolSpecInput, label = spec.name): Tool {
  return {
    spec: spec as Tool['spec'],
    async execute(args) {
      return { ok: true, content: [{ type: 'text', text: `${label}:${JSON.stringify(args)}` }] };
    },
  };
}

export function dynamicOf(spec: ToolSpecInput, label = spec.name): DynamicTool {
  const tool = toolOf(spec, label);
  return { spec, execute: tool.execute };
}

// One validator for the file: building ajv's 2020-12 meta-schema per test is the slow part.
const sharedValidator = new AjvSchemaValidator();

export function newRegistry(options: Partial<ToolRegistryOptions> = {}): InMemoryToolRegistry {
  return new InMemoryToolRegistry({ validator: sharedValidator, globalMaximumOutputBytes: GLOBAL_CEILING, ...options });
}

export const principal: Principal = { tenant_id: 't1', principal_id: 'p1', scopes: ['workspace.*', 'web.read', 'mcp.acme.use'] };

export const everyAgent: AgentSpec = { agentId: 'agent-1' };

export const fullEnvironment: RuntimeEnvironment = {
  flags: {},
  targetKinds: ['in_process', 'sandbox', 'mcp', 'device', 'web_provider', 'browser_provider', 'unsubscribe_endpoint'],
};

/** A profile that offers everything except the names it is given. */
export function policyDenying(...names: string[]): PolicyEngine {
  return {
    evaluate: () => ({ effect: 'allow', reason_code: 'policy.allow', rule_id: 'test', policy_version: 'test@0' }),
    offers: (spec) => !names.includes(spec.name),
  };
}
