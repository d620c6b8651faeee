import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { ToolSpec, type Principal, type ToolSpecInput } from '@veetbot/domain';
import type { PipelineHooks, PipelineStepNumber } from '@veetbot/executor';
import type { PolicyEngine, RunStore, Stores, Tool, ToolExecutionContext, WorkspaceProvider } from '@veetbot/ports';
import { AjvSchemaValidator } from '@veetbot/validation';
import { InMemoryToolRegistry } from '@veetbot/registry';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { createBuiltinTools } from '@veetbot/tools-builtin';
import { createArtifactWriterFactory, FolderBlobStore } from '@veetbot/blob-store-folder';
import { DefaultCredentialResolver } from '@veetbot/credential-broker';
import { Runtime, type RuntimeSettings, type StepSubmission } from '@veetbot/runtime';
import { openTestDatabase, TestClock, T0, type Driver, type TestDatabase } from '../src';
import { workspaceService } from '../src/workspace-service';

/**
 * The runtime composed as a worker composes it, over a real database: the ajv validator, the
 * registry with the builtins (a temp outbox) and the runtime test tools below, the default
 * policy engine, the folder blob store, the credential broker, and a folder workspace per run.
 * Several workers (lease owners) share one scene, as several processes share one database.
 */

export const RUNTIME_LEASE_TTL_MS = 30_000;

/** The runtime test tools: one per behaviour the batch and recovery suites need. */
export class RuntimeToolProbe {
  /** Calls currently inside execute, and the most ever at once. */
  inFlight = 0;
  peak = 0;
  readonly starts: { args: Record<string, unknown>; context: ToolExecutionContext; at: number }[] = [];
  readonly finishes: { args: Record<string, unknown>; at: number }[] = [];
  /** Awaited inside execute, before the tool returns (tests hold a call here). */
  during: ((args: Record<string, unknown>, context: ToolExecutionContext) => Promise<void>) | null = null;
  get executions(): number {
    return this.starts.length;
  }
}

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';
const INPUT = {
  $schema: DIALECT,
  type: 'object',
  properties: { n: { type: 'integer' }, fail: { type: 'boolean', default: false } },
  additionalProperties: false,
};

function probed(declaration: Partial<ToolSpecInput> & { name: string }, probe: RuntimeToolProbe): Tool {
  const spec = ToolSpec.parse({
    version: '1.0.0',
    description: `Runtime test tool ${declaration.name}.`,
    input_schema: INPUT,
    output_schema: null,
    side_effect: 'none',
    risk: 'low',
    idempotency: 'read_only',
    required_scopes: [],
    timeout_seconds: 10,
    maximum_output_bytes: 4096,
    allow_parallel: false,
    output_trust: 'internal_tool',
    ...declaration,
  });
  return {
    spec,
    async execute(args, context) {
      probe.starts.push({ args, context, at: performance.now() });
      probe.inFlight += 1;
      probe.peak = Math.max(probe.peak, probe.inFlight);
      try {
        await probe.during?.(args, context);
        if (args.fail === true) throw new Error('this read failed');
        return { ok: true, content: [{ type: 'text', text: `${spec.name} n=${String(args.n)}` }], structured: null };
      } finally {
        probe.inFlight -= 1;
        probe.finishes.push({ args, at: performance.now() });
      }
    },
  };
}

/** Tool name -> declaration. The four recovery classes each have a non-NONE side effect so the executor sets the watermark. */
export const RUNTIME_TEST_TOOLS = {
  'demo.rt_read': { side_effect: 'external_read', idempotency: 'read_only', allow_parallel: true },
  'demo.rt_idempotent': { side_effect: 'external_write', idempotency: 'idempotent', risk: 'medium' },
  'demo.rt_conditional': { side_effect: 'external_write', idempotency: 'conditionally_idempotent', risk: 'medium' },
  'demo.rt_non_idempotent': { side_effect: 'external_write', idempotency: 'non_idempotent', risk: 'medium' },
} as const satisfies Record<string, Partial<ToolSpecInput>>;
export type RuntimeTestTool = keyof typeof RUNTIME_TEST_TOOLS;

/** Throws as a step begins: the worker "dies" there. */
export class WorkerDied extends Error {
  constructor(readonly step: PipelineStepNumber) {
    super(`worker died at step ${step}`);
  }
}
export const dieAt = (step: PipelineStepNumber): PipelineHooks => ({
  onStep: (n) => {
    if (n === step) throw new WorkerDied(step);
  },
});

/** A dead process never releases its lease: the lease store of a worker that will "die". */
export function neverReleases(stores: Stores): Stores {
  const runs = stores.runs;
  const dead: RunStore = {
    create: (...a) => runs.create(...a),
    get: (...a) => runs.get(...a),
    acquireLease: (...a) => runs.acquireLease(...a),
    renewLease: (...a) => runs.renewLease(...a),
    releaseLease: async () => false,
    setStatus: (...a) => runs.setStatus(...a),
    complete: (...a) => runs.complete(...a),
    listChildren: (...a) => runs.listChildren(...a),
    delegatedCalls: (...a) => runs.delegatedCalls(...a),
  };
  return { ...stores, runs: dead };
}

/** `<root>/<tenant-hash>/<run_id>`, created on first use. */
function folderWorkspaces(root: string): WorkspaceProvider {
  return {
    async forRun(tenantId, runId) {
      const folder = path.join(root, createHash('sha256').update(tenantId, 'utf8').digest('hex').slice(0, 32), runId);
      await mkdir(folder, { recursive: true });
      // The confined workspace helper serves it (docs/adr/0058), as in the composition.
      return workspaceService(root).handle(folder);
    },
  };
}

export interface RuntimeScene {
  readonly driver: Driver;
  readonly stores: Stores;
  readonly clock: TestClock;
  readonly tenantId: string;
  readonly principal: Principal;
  readonly probes: Record<RuntimeTestTool, RuntimeToolProbe>;
  readonly folders: { readonly root: string; readonly outbox: string; readonly workspaces: string };
  /** worker-main. */
  readonly runtime: Runtime;
  worker(
    owner: string,
    options?: { hooks?: PipelineHooks; settings?: Partial<RuntimeSettings>; stores?: Stores; policy?: PolicyEngine },
  ): Runtime;
  /** A session pinning every registered tool, and a run in it. */
  openRun(): Promise<{ sessionId: string; runId: string }>;
  step(runId: string, stepNumber: number, calls: StepSubmission['calls']): StepSubmission;
  outboxLines(): Promise<string[]>;
  close(): Promise<void>;
}

let sceneCounter = 0;

export async function openRuntimeScene(
  database: TestDatabase,
  options: { settings?: Partial<RuntimeSettings> } = {},
): Promise<RuntimeScene> {
  sceneCounter += 1;
  const stores = database.stores;
  const root = await mkdtemp(path.join(tmpdir(), 'veetbot-runtime-'));
  const folders = { root, outbox: path.join(root, 'outbox', 'outbox.log'), workspaces: path.join(root, 'workspaces') };
  const clock = new TestClock(T0);
  const validator = new AjvSchemaValidator();
  const registry = new InMemoryToolRegistry({ validator, globalMaximumOutputBytes: 1024 * 1024, flags: {} });
  const probes = Object.fromEntries(Object.keys(RUNTIME_TEST_TOOLS).map((name) => [name, new RuntimeToolProbe()])) as Record<
    RuntimeTestTool,
    RuntimeToolProbe
  >;
  registry.registerBuiltins([
    ...createBuiltinTools({ outboxPath: folders.outbox, clock }),
    ...Object.entries(RUNTIME_TEST_TOOLS).map(([name, declaration]) => probed({ name, ...declaration }, probes[name as RuntimeTestTool])),
  ]);
  const policy = new DefaultPolicyEngine();
  const credentials = new DefaultCredentialResolver({ env: {} });
  const artifacts = createArtifactWriterFactory({
    blobs: new FolderBlobStore({ root: path.join(root, 'blobs') }),
    artifacts: stores.artifacts,
    clock,
  });
  const workspaces = folderWorkspaces(folders.workspaces);

  const tenantId = `rt-tenant-${sceneCounter}-${globalThis.crypto.randomUUID()}`;
  await stores.tenants.create({ id: tenantId, name: 'Runtime test tenant', createdAt: T0 });
  const principal: Principal = {
    tenant_id: tenantId,
    principal_id: 'principal-1',
    scopes: ['workspace.read', 'workspace.write', 'demo.write'],
  };

  const worker: RuntimeScene['worker'] = (owner, extra = {}) =>
    new Runtime({
      registry,
      validator,
      policy: extra.policy ?? policy,
      clock,
      stores: extra.stores ?? stores,
      artifacts,
      credentials,
      owner,
      workspaces,
      ...(extra.hooks === undefined ? {} : { hooks: extra.hooks }),
      settings: { leaseTtlMs: RUNTIME_LEASE_TTL_MS, ...options.settings, ...extra.settings },
    });
  const runtime = worker('worker-main');

  return {
    driver: database.driver,
    stores,
    clock,
    tenantId,
    principal,
    probes,
    folders,
    runtime,
    worker,
    async openRun() {
      const session = await runtime.openSession(tenantId, principal, { agentId: 'agent-1' }, { flags: {}, targetKinds: ['in_process'] });
      const run = await runtime.createRun(tenantId, session.id, { deadlineAt: new Date(clock.now().getTime() + 3_600_000) });
      return { sessionId: session.id, runId: run.id };
    },
    step(runId, stepNumber, calls) {
      return { tenantId, runId, stepNumber, principal, calls };
    },
    async outboxLines() {
      const text = await readFile(folders.outbox, 'utf8').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return '';
        throw error;
      });
      return text.split('\n').filter((line) => line !== '');
    },
    async close() {
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** One database per driver per file; a fresh scene (its own tenant and folders) per test. */
export function useRuntimeScene(driver: Driver, options: { settings?: Partial<RuntimeSettings> } = {}): () => RuntimeScene {
  let database: TestDatabase | undefined;
  let scene: RuntimeScene | undefined;
  beforeAll(async () => {
    database = await openTestDatabase(driver);
  });
  afterAll(async () => {
    await database?.close();
  });
  beforeEach(async () => {
    scene = await openRuntimeScene(database!, options);
  });
  afterEach(async () => {
    await scene?.close();
    scene = undefined;
  });
  return () => {
    if (scene === undefined) throw new Error('no scene outside a test');
    return scene;
  };
}

/** A model call whose turn saw USER content only. */
export function userCall(callId: string, toolName: string, args: unknown = {}) {
  return { callId, toolName, arguments: args, contextTrust: ['user' as const] };
}
