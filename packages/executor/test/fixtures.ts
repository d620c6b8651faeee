import { ToolSpec, type Principal, type ToolSpecInput } from '@veetbot/domain';
import type { PolicyEngine, Tool } from '@veetbot/ports';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { InMemoryToolRegistry } from '@veetbot/registry';
import { createBuiltinTools } from '@veetbot/tools-builtin';
import { AjvSchemaValidator } from '@veetbot/validation';
import type { PipelineDeps, PipelineStepNumber, SessionView, ToolCallRequest } from '../src';

export const principal: Principal = {
  tenant_id: 't1',
  principal_id: 'p1',
  scopes: ['demo.use', 'demo.write', 'workspace.read', 'workspace.write'],
};

export function testTool(spec: Partial<ToolSpecInput> & { name: string }): Tool {
  return {
    spec: ToolSpec.parse({
      version: '1',
      description: 'test tool',
      input_schema: { type: 'object', properties: { n: { type: 'integer' } } },
      output_schema: null,
      side_effect: 'none',
      risk: 'low',
      idempotency: 'read_only',
      required_scopes: [],
      timeout_seconds: 5,
      maximum_output_bytes: 4096,
      allow_parallel: true,
      output_trust: 'internal_tool',
      ...spec,
    }),
    execute: async () => ({ ok: true, content: [{ type: 'text', text: 'ran' }] }),
  };
}

export function tenProperties(): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 10; i++) properties[`p${i}`] = i % 2 === 0 ? { type: 'string', maxLength: 64 } : { type: 'integer', default: i };
  return { type: 'object', properties, required: ['p0'] };
}

export function setup(options: { policy?: PolicyEngine; extraTools?: Tool[] } = {}) {
  const validator = new AjvSchemaValidator();
  const registry = new InMemoryToolRegistry({ validator, globalMaximumOutputBytes: 1024 * 1024, flags: {} });
  registry.registerBuiltins([
    ...createBuiltinTools({ outboxPath: '/nonexistent/outbox.log' }),
    testTool({ name: 'demo.scoped', required_scopes: ['demo.admin'] }),
    testTool({ name: 'demo.ten', input_schema: tenProperties() }),
    testTool({ name: 'demo.open', input_schema: { type: 'object', additionalProperties: true } }),
    ...(options.extraTools ?? []),
  ]);
  const policy = options.policy ?? new DefaultPolicyEngine();
  const steps: PipelineStepNumber[] = [];
  const deps: PipelineDeps = {
    registry,
    validator,
    policy,
    clock: { now: () => new Date('2026-11-30T00:00:00Z') },
    hooks: { onStep: (n) => void steps.push(n) },
  };
  const session: SessionView = { agent: { agentId: 'a1' }, pinned: null };
  return { deps, session, registry, steps };
}

let counter = 0;
export function call(toolName: string, args: unknown, over: Partial<ToolCallRequest> = {}): ToolCallRequest {
  counter += 1;
  return {
    tenantId: 't1',
    principal,
    sessionId: 's1',
    runId: 'r1',
    stepNumber: 1,
    callId: `call_${counter}`,
    toolName,
    arguments: args,
    origin: 'model',
    contextTrust: ['user'],
    ...over,
  };
}
