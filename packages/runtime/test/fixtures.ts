import { ToolSpec, type JsonSchemaDocument, type Principal, type ToolResultInput, type ToolSpecInput } from '@veetbot/domain';
import type { PipelineHooks } from '@veetbot/executor';
import type { ArgumentValidation, Clock, McpClientPort, PolicyEngine, SchemaValidator, Tool, ToolExecutionContext } from '@veetbot/ports';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { InMemoryToolRegistry } from '@veetbot/registry';
import { Runtime, type RuntimeSettings, type StepSubmission } from '../src';
import { memoryStores, type MemoryStores } from './memory-stores';

/**
 * A small validator for the unit tests (the runtime may not see the ajv adapter; the
 * integration tests run the real one): object arguments, `required`, string/integer types,
 * defaults, and additionalProperties false unless the schema says true.
 */
export class TinyValidator implements SchemaValidator {
  admit() {
    return { ok: true } as const;
  }
  validateArguments(_key: unknown, schema: JsonSchemaDocument, args: unknown): ArgumentValidation {
    const bad = (keyword: string, path = '') => ({ valid: false as const, violation: { schemaPath: `#/${keyword}`, instancePath: path, keyword } });
    if (typeof args !== 'object' || args === null || Array.isArray(args)) return bad('type');
    const s = schema as { properties?: Record<string, { type?: string; default?: unknown }>; required?: string[]; additionalProperties?: boolean };
    const value: Record<string, unknown> = { ...(args as Record<string, unknown>) };
    for (const name of s.required ?? []) if (!(name in value)) return bad('required');
    for (const [name, prop] of Object.entries(s.properties ?? {})) {
      if (!(name in value) && prop.default !== undefined) value[name] = prop.default;
      const v = value[name];
      if (v === undefined) continue;
      if (prop.type === 'integer' && !Number.isInteger(v)) return bad('type', `/${name}`);
      if (prop.type === 'string' && typeof v !== 'string') return bad('type', `/${name}`);
    }
    if (s.additionalProperties !== true) for (const name of Object.keys(value)) if (!(name in (s.properties ?? {}))) return bad('additionalProperties');
    return { valid: true, value };
  }
  validateOutput() {
    return { valid: true } as const;
  }
}

export class ManualClock implements Clock {
  #now: number;
  constructor(start = Date.parse('2026-11-30T00:00:00Z')) {
    this.#now = start;
  }
  now(): Date {
    return new Date(this.#now);
  }
  advance(ms: number): void {
    this.#now += ms;
  }
}

export const principal: Principal = { tenant_id: 't1', principal_id: 'p1', scopes: ['demo.read', 'demo.write'] };

type Execute = (args: Record<string, unknown>, ctx: ToolExecutionContext) => Promise<ToolResultInput>;

/** A demo-domain builtin; every field not given is a harmless read. */
export function tool(spec: Partial<ToolSpecInput> & { name: string }, execute?: Execute): Tool {
  return {
    spec: ToolSpec.parse({
      version: '1',
      description: 'test tool',
      input_schema: { type: 'object', properties: { n: { type: 'integer' }, path: { type: 'string' } } },
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
    execute: execute ?? (async (args) => ({ ok: true, content: [{ type: 'text', text: `ran ${JSON.stringify(args)}` }] })),
  };
}

export interface Harness {
  readonly stores: MemoryStores;
  readonly clock: ManualClock;
  readonly registry: InMemoryToolRegistry;
  readonly runtime: Runtime;
  /** Another worker (another lease owner) over the same stores and registry. */
  worker(owner: string, options?: { hooks?: PipelineHooks; settings?: Partial<RuntimeSettings> }): Runtime;
  open(options?: { deadlineInMs?: number; maximumToolCalls?: number }): Promise<{ sessionId: string; runId: string }>;
  step(runId: string, stepNumber: number, calls: StepSubmission['calls']): StepSubmission;
}

export function harness(options: { tools: Tool[]; policy?: PolicyEngine; settings?: Partial<RuntimeSettings>; hooks?: PipelineHooks; mcp?: McpClientPort }): Harness {
  const stores = memoryStores();
  const clock = new ManualClock();
  const validator = new TinyValidator();
  const registry = new InMemoryToolRegistry({ validator, globalMaximumOutputBytes: 1024 * 1024 });
  registry.registerBuiltins(options.tools);
  const policy = options.policy ?? new DefaultPolicyEngine();
  const worker = (owner: string, extra: { hooks?: PipelineHooks; settings?: Partial<RuntimeSettings> } = {}) =>
    new Runtime({
      registry,
      validator,
      policy,
      clock,
      stores,
      artifacts: {
        forScope: () => ({
          write: async () => {
            throw new Error('no artifacts in these tests');
          },
        }),
      },
      credentials: {
        resolve: async () => {
          throw new Error('no credentials in these tests');
        },
      },
      owner,
      workspaces: { forRun: async () => null },
      ...(options.mcp === undefined ? {} : { mcp: options.mcp }),
      ...(extra.hooks ?? options.hooks ? { hooks: (extra.hooks ?? options.hooks)! } : {}),
      settings: { ...options.settings, ...extra.settings },
    });
  const runtime = worker('worker-main');
  return {
    stores,
    clock,
    registry,
    runtime,
    worker,
    async open(o = {}) {
      const session = await runtime.openSession('t1', principal, { agentId: 'agent' }, { flags: {}, targetKinds: ['in_process'] });
      const run = await runtime.createRun('t1', session.id, {
        deadlineAt: new Date(clock.now().getTime() + (o.deadlineInMs ?? 3_600_000)),
        ...(o.maximumToolCalls === undefined ? {} : { budgets: { maximumToolCalls: o.maximumToolCalls } }),
      });
      return { sessionId: session.id, runId: run.id };
    },
    step(runId, stepNumber, calls) {
      return { tenantId: 't1', runId, stepNumber, principal, calls };
    },
  };
}

/** A model call with USER context (no approval needed for writes under the default profile). */
export function callOf(callId: string, toolName: string, args: unknown = {}, contextTrust: StepSubmission['calls'][number]['contextTrust'] = ['user']) {
  return { callId, toolName, arguments: args, contextTrust };
}

/** Resolves when `release()` is called: holds a tool inside execute. */
export function gate(): { wait: Promise<void>; release: () => void } {
  let release!: () => void;
  const wait = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { wait, release };
}
