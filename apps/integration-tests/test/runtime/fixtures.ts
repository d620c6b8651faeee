import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { ToolSpec, type JsonSchemaDocument, type Principal, type ToolResultInput, type ToolSpecInput } from '@veetbot/domain';
import type { PipelineHooks } from '@veetbot/executor';
import type {
  ArgumentValidation,
  DynamicTool,
  ConsentSuspensionHost,
  McpClientPort,
  NewInvocation,
  PolicyEngine,
  SchemaValidator,
  Stores,
  Tool,
  ToolExecutionContext,
} from '@veetbot/ports';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { InMemoryToolRegistry } from '@veetbot/registry';
import { Runtime, type RuntimeSettings, type StepSubmission } from '@veetbot/runtime';
import { openTestDatabase, TestClock, T0, type Driver, type TestDatabase } from '../../src';

/*
 * The runtime's own tests (moved from packages/runtime/test, ADR 0029): the Runtime over the
 * real stores on PGlite (and PostgreSQL when DATABASE_URL is set), never an in-memory copy of
 * them. One database per file, one fresh tenant per harness: tests are isolated by tenant, not
 * by database, because opening and migrating a database costs seconds. A file whose subject
 * reads across tenants (the recovery sweep, § Control tools) asks for a database per test.
 */

/**
 * A small validator for these tests, kept from the package tests so their tool schemas (no
 * `$schema`, additionalProperties false unless the schema says true) mean what they meant:
 * object arguments, `required`, string/integer types, defaults. The suites under test/ run
 * the real ajv validator.
 */
export class TinyValidator implements SchemaValidator {
  admit() {
    return { ok: true } as const;
  }
  validateArguments(_key: unknown, schema: JsonSchemaDocument, args: unknown): ArgumentValidation {
    const bad = (keyword: string, path = '') => ({
      valid: false as const,
      violation: { schemaPath: `#/${keyword}`, instancePath: path, keyword },
    });
    if (typeof args !== 'object' || args === null || Array.isArray(args)) return bad('type');
    const s = schema as {
      properties?: Record<string, { type?: string; default?: unknown }>;
      required?: string[];
      additionalProperties?: boolean;
    };
    const value: Record<string, unknown> = { ...(args as Record<string, unknown>) };
    for (const name of s.required ?? []) if (!(name in value)) return bad('required');
    for (const [name, prop] of Object.entries(s.properties ?? {})) {
      if (!(name in value) && prop.default !== undefined) value[name] = prop.default;
      const v = value[name];
      if (v === undefined) continue;
      if (prop.type === 'integer' && !Number.isInteger(v)) return bad('type', `/${name}`);
      if (prop.type === 'string' && typeof v !== 'string') return bad('type', `/${name}`);
    }
    if (s.additionalProperties !== true)
      for (const name of Object.keys(value)) if (!(name in (s.properties ?? {}))) return bad('additionalProperties');
    return { valid: true, value };
  }
  validateOutput() {
    return { valid: true } as const;
  }
}

/** The principal the harness acts as, in its own tenant. */
export const principalOf = (tenantId: string): Principal => ({
  tenant_id: tenantId,
  principal_id: 'p1',
  scopes: ['demo.read', 'demo.write'],
});

/** A fresh tenant row: every harness (and every extra tenant a test needs) gets its own. */
export async function newTenant(stores: Stores, label = 't'): Promise<string> {
  const tenantId = `${label}-${globalThis.crypto.randomUUID()}`;
  await stores.tenants.create({ id: tenantId, name: 'Runtime test tenant', createdAt: T0 });
  return tenantId;
}

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
  readonly database: TestDatabase;
  readonly stores: Stores;
  readonly clock: TestClock;
  /** This harness's own tenant, and its principal. */
  readonly tenantId: string;
  readonly principal: Principal;
  readonly registry: InMemoryToolRegistry;
  readonly runtime: Runtime;
  /** Another worker (another lease owner) over the same stores and registry. */
  worker(owner: string, options?: { hooks?: PipelineHooks; settings?: Partial<RuntimeSettings> }): Runtime;
  open(options?: { deadlineInMs?: number; maximumToolCalls?: number }): Promise<{ sessionId: string; runId: string }>;
  step(runId: string, stepNumber: number, calls: StepSubmission['calls']): StepSubmission;
}

export interface HarnessOptions {
  tools: Tool[];
  policy?: PolicyEngine;
  settings?: Partial<RuntimeSettings>;
  hooks?: PipelineHooks;
  mcp?: McpClientPort;
  /** docs/adr/0082: where a call that needs a person's consent suspends. */
  consents?: ConsentSuspensionHost;
}

/**
 * Registers the database hooks of one describe block and returns the harness factory its
 * tests call. `databasePerTest`: a fresh database for every test (for suites whose subject
 * reads every tenant's rows, where a tenant of its own isolates nothing).
 */
export function useHarness(driver: Driver, options: { databasePerTest?: boolean } = {}): (o: HarnessOptions) => Promise<Harness> {
  let database: TestDatabase | undefined;
  const open = async () => {
    database = await openTestDatabase(driver);
  };
  const close = async () => {
    await database?.close();
    database = undefined;
  };
  if (options.databasePerTest === true) {
    beforeEach(open);
    afterEach(close);
  } else {
    beforeAll(open);
    afterAll(close);
  }
  return async (o) => {
    if (database === undefined) throw new Error('no database outside a test');
    return harness(database, o);
  };
}

async function harness(database: TestDatabase, options: HarnessOptions): Promise<Harness> {
  const stores = database.stores;
  const tenantId = await newTenant(stores);
  const principal = principalOf(tenantId);
  const clock = new TestClock(T0);
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
      ...(options.consents === undefined ? {} : { consents: options.consents }),
      ...((extra.hooks ?? options.hooks) ? { hooks: (extra.hooks ?? options.hooks)! } : {}),
      settings: { ...options.settings, ...extra.settings },
    });
  const runtime = worker('worker-main');
  return {
    database,
    stores,
    clock,
    tenantId,
    principal,
    registry,
    runtime,
    worker,
    async open(o = {}) {
      const session = await runtime.openSession(tenantId, principal, { agentId: 'agent' }, { flags: {}, targetKinds: ['in_process'] });
      const run = await runtime.createRun(tenantId, session.id, {
        deadlineAt: new Date(clock.now().getTime() + (o.deadlineInMs ?? 3_600_000)),
        ...(o.maximumToolCalls === undefined ? {} : { budgets: { maximumToolCalls: o.maximumToolCalls } }),
      });
      return { sessionId: session.id, runId: run.id };
    },
    step(runId, stepNumber, calls) {
      return { tenantId, runId, stepNumber, principal, calls };
    },
  };
}

/**
 * An AUTHORIZED intent of the read-only builtin `demo.read`, as step 8 writes it, for tests
 * that place a row by hand (a row the runtime did not submit, a suspension).
 */
export function readIntent(
  createdAt: Date,
  fields: Pick<NewInvocation, 'runId' | 'sessionId' | 'stepNumber' | 'callId' | 'idempotencyKey' | 'argumentsHash'> &
    Partial<NewInvocation>,
): NewInvocation {
  return {
    toolName: 'demo.read',
    toolVersion: '1',
    status: 'authorized',
    arguments: {},
    toolSource: 'builtin',
    serverId: null,
    idempotencyClass: 'read_only',
    originTrust: 'user',
    parallelGroup: null,
    createdAt,
    ...fields,
  };
}

/** A model call with USER context (no approval needed for writes under the default profile). */
export function callOf(
  callId: string,
  toolName: string,
  args: unknown = {},
  contextTrust: StepSubmission['calls'][number]['contextTrust'] = ['user'],
) {
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

/**
 * The one MCP tool the runtime's MCP doubles "discover": `mcp.acme.ping` on server `acme`, at the
 * given version, answering `text` (mcp-session and tenant-registries tests).
 */
export function acmePing(version: string, description: string, text: string): DynamicTool {
  return {
    spec: {
      name: 'mcp.acme.ping',
      version,
      description,
      input_schema: { type: 'object', properties: {}, additionalProperties: false },
      output_schema: null,
      side_effect: 'none',
      risk: 'low',
      idempotency: 'read_only',
      required_scopes: [],
      timeout_seconds: 5,
      maximum_output_bytes: 1024,
      allow_parallel: false,
      output_trust: 'external_untrusted',
      source: 'mcp',
      server_id: 'acme',
      target_kind: 'mcp',
    },
    execute: async () => ({ ok: true, content: [{ type: 'text', text }] }),
  };
}
