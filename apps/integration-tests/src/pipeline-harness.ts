import { workspaceService } from './workspace-service';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Principal } from '@veetbot/domain';
import type {
  Clock,
  EventRow,
  InvocationRow,
  InvocationStore,
  LeaseFence,
  PinnedToolSet,
  PolicyEngine,
  Stores,
  Tool,
  ToolExecutionContext,
} from '@veetbot/ports';
import { AjvSchemaValidator } from '@veetbot/validation';
import { InMemoryToolRegistry } from '@veetbot/registry';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { createBuiltinTools } from '@veetbot/tools-builtin';
import { createArtifactWriterFactory, FolderBlobStore } from '@veetbot/blob-store-folder';
import { DefaultCredentialResolver } from '@veetbot/credential-broker';
import {
  executeToolCall,
  type DurableDeps,
  type PipelineDeps,
  type PipelineResult,
  type PipelineStepNumber,
  type RunContext,
  type SessionView,
  type ToolCallRequest,
} from '@veetbot/executor';
import { createDemoTestTools } from './demo-test-tools';
import type { Driver, TestDatabase } from './test-database';

/**
 * The durable pipeline composed over a real database, as a worker composes it: the real
 * validator, registry (builtins plus the demo test tools), default policy engine, stores,
 * folder blob store and credential broker, a controllable clock, and a run whose lease the
 * worker holds. Nothing in the path is a fake; tests observe it through step hooks, tool
 * probes and the stores.
 */

/** The run lease every worker takes (ms of the harness clock). */
export const LEASE_TTL_MS = 60_000;
/** output.inline_maximum_bytes as shipped (§ Output). */
export const INLINE_MAXIMUM_BYTES = 4096;
/** The harness clock starts here. */
export const T0 = new Date(Date.UTC(2030, 0, 1, 12, 0, 0));
/** The value demo.secret_echo resolves through env:TEST_TOKEN. */
export const TEST_TOKEN_VALUE = 'tok_live_5f0c2e9a7d41b3e8';

/** A clock that moves only when a test moves it. */
export class TestClock implements Clock {
  #now: number;
  constructor(start: Date) {
    this.#now = start.getTime();
  }
  now(): Date {
    return new Date(this.#now);
  }
  advance(ms: number): Date {
    this.#now += ms;
    return this.now();
  }
}

/** Thrown by the step hook at `crashAt`: the worker "dies" at the start of that step. */
export class SimulatedCrash extends Error {
  constructor(readonly step: PipelineStepNumber) {
    super(`simulated crash at step ${step}`);
    this.name = 'SimulatedCrash';
  }
}

/** What a tool saw when it started: observed by a wrapper before the tool's own code runs. */
export interface ToolStart {
  readonly args: Record<string, unknown>;
  readonly context: ToolExecutionContext;
  /** The invocation row read through the store at the moment the tool started. */
  readonly rowAtStart: InvocationRow | null;
}

/** One per registered tool: every start, and an optional behaviour run before the tool's code. */
export class ToolProbe {
  readonly starts: ToolStart[] = [];
  /** Awaited after the start is recorded and before the tool's own code (tests install delays, lease thefts, ...). */
  during: ((context: ToolExecutionContext, args: Record<string, unknown>) => Promise<void>) | null = null;
  get executions(): number {
    return this.starts.length;
  }
  last(): ToolStart {
    const start = this.starts.at(-1);
    if (start === undefined) throw new Error('the tool never started');
    return start;
  }
}

/** Wraps a tool so its probe sees every start; the spec is the tool's own. */
function observed(tool: Tool, probe: ToolProbe, stores: Stores): Tool {
  return {
    spec: tool.spec,
    async execute(args, context) {
      const rowAtStart = await stores.invocations.getById(context.tenantId, context.invocationId);
      probe.starts.push({ args, context, rowAtStart });
      if (probe.during !== null) await probe.during(context, args);
      return tool.execute(args, context);
    },
  };
}

export interface WorkerOptions {
  /** Replaces the invocation store (tests wrap the real one to inject a failure). */
  readonly invocations?: InvocationStore;
  /** Replaces the policy engine. */
  readonly policy?: PolicyEngine;
  readonly inlineMaximumBytes?: number;
  /** Use this fence instead of acquiring the lease (a worker that does not hold the run). */
  readonly fence?: LeaseFence;
}

/** One worker process: its owner name, its lease, its in-flight set, its deps. */
export interface PipelineWorker {
  readonly owner: string;
  readonly fence: LeaseFence;
  readonly deps: PipelineDeps;
  readonly durable: DurableDeps;
  readonly run: RunContext;
  /** executeToolCall with this worker's run context, optionally adjusted for one call. */
  execute(request: ToolCallRequest, run?: Partial<Omit<RunContext, 'fence'>>): Promise<PipelineResult>;
}

export interface PipelineHarness {
  readonly driver: Driver;
  readonly database: TestDatabase;
  readonly stores: Stores;
  readonly clock: TestClock;
  readonly registry: InMemoryToolRegistry;
  readonly validator: AjvSchemaValidator;
  readonly policy: DefaultPolicyEngine;
  readonly credentials: DefaultCredentialResolver;
  readonly blobs: FolderBlobStore;
  readonly tenantId: string;
  readonly sessionId: string;
  readonly runId: string;
  /** The run's deadline (also every worker's RunContext.deadlineAt). */
  readonly deadlineAt: Date;
  readonly principal: Principal;
  readonly pinned: PinnedToolSet;
  readonly session: SessionView;
  readonly folders: { readonly root: string; readonly workspace: string; readonly outbox: string; readonly blobs: string };
  /** Every registered tool's probe, by name. */
  readonly probes: ReadonlyMap<string, ToolProbe>;
  /** Steps as they began, across all workers (reset it freely). */
  readonly steps: PipelineStepNumber[];
  /** When set, the step hook throws SimulatedCrash as that step begins. */
  crashAt: PipelineStepNumber | null;
  /** When set, awaited as every step begins (after recording it): observe the world mid-call. */
  onStep: ((step: PipelineStepNumber) => void | Promise<void>) | null;
  /** worker-a, holding the run's lease from the start. */
  readonly worker: PipelineWorker;
  probe(toolName: string): ToolProbe;
  /** A model call in this run (fresh call id; step 1; the turn saw USER content only). */
  call(toolName: string, args: unknown, over?: Partial<ToolCallRequest>): ToolCallRequest;
  /** worker-a's execute. */
  execute(request: ToolCallRequest, run?: Partial<Omit<RunContext, 'fence'>>): Promise<PipelineResult>;
  /**
   * A worker with the current lease: acquires it as `owner` (fencing out every earlier holder),
   * unless `options.fence` is given.
   */
  newWorker(owner: string, options?: WorkerOptions): Promise<PipelineWorker>;
  /** The lease expires (the clock passes its TTL) and `owner` takes the run over. */
  takeOver(owner: string, options?: WorkerOptions): Promise<PipelineWorker>;
  /** The run's event stream, in sequence order. */
  events(): Promise<EventRow[]>;
  /** The tool events of one invocation, in sequence order. */
  eventsOf(invocationId: string): Promise<EventRow[]>;
  invocation(invocationId: string): Promise<InvocationRow>;
  /** The invocation of a call id in this run. */
  invocationOfCall(callId: string): Promise<InvocationRow>;
  outboxLines(): Promise<string[]>;
  close(): Promise<void>;
}

let harnessCounter = 0;

/**
 * A fresh scene on an open test database: its own tenant, session, run, registry, folders and
 * worker-a holding the lease. Opening a database is the slow part, so a suite opens one per
 * driver (openTestDatabase) and a scene per test; scenes never share rows (one tenant each).
 */
export async function openPipelineHarness(database: TestDatabase): Promise<PipelineHarness> {
  harnessCounter += 1;
  const driver = database.driver;
  const stores = database.stores;
  const root = await mkdtemp(path.join(tmpdir(), 'veetbot-pipeline-'));
  const folders = {
    root,
    // The provider's layout, which the confined workspace helper serves (docs/adr/0058).
    workspace: path.join(root, 'workspaces', 'ab'.repeat(16), randomUUID()),
    outbox: path.join(root, 'outbox', 'outbox.log'),
    blobs: path.join(root, 'blobs'),
  };
  await mkdir(folders.workspace, { recursive: true });

  const clock = new TestClock(T0);
  const validator = new AjvSchemaValidator();
  const registry = new InMemoryToolRegistry({ validator, globalMaximumOutputBytes: 1024 * 1024, flags: {} });
  const probes = new Map<string, ToolProbe>();
  const tools = [...createBuiltinTools({ outboxPath: folders.outbox, clock }), ...createDemoTestTools()].map((tool) => {
    const probe = new ToolProbe();
    probes.set(tool.spec.name, probe);
    return observed(tool, probe, stores);
  });
  registry.registerBuiltins(tools);
  const policy = new DefaultPolicyEngine();
  const credentials = new DefaultCredentialResolver({ env: { TEST_TOKEN: TEST_TOKEN_VALUE } });
  const blobs = new FolderBlobStore({ root: folders.blobs });
  const artifacts = createArtifactWriterFactory({ blobs, artifacts: stores.artifacts, clock });

  const tenantId = `tenant-${harnessCounter}-${globalThis.crypto.randomUUID()}`;
  const principal: Principal = {
    tenant_id: tenantId,
    principal_id: 'principal-1',
    scopes: ['workspace.read', 'workspace.write', 'demo.write'],
  };
  const agent = { agentId: 'agent-1' };
  const pinned = registry.specsForSession(agent, principal, policy, { flags: {}, targetKinds: ['in_process'] });
  await stores.tenants.create({ id: tenantId, name: 'Pipeline test tenant', createdAt: T0 });
  const sessionRow = await stores.sessions.create(tenantId, {
    principalId: principal.principal_id,
    agentId: agent.agentId,
    toolNames: pinned.toolNames,
    specs: pinned.specs,
    toolSchemaSha256: pinned.toolSchemaSha256,
    createdAt: T0,
  });
  const deadlineAt = new Date(T0.getTime() + 3_600_000);
  const runRow = await stores.runs.create(tenantId, { sessionId: sessionRow.id, deadlineAt, budgets: { tool_calls: 100 }, createdAt: T0 });
  const session: SessionView = { agent, pinned };

  const steps: PipelineStepNumber[] = [];
  let callCounter = 0;

  const harness = {
    crashAt: null as PipelineStepNumber | null,
    onStep: null as ((step: PipelineStepNumber) => void | Promise<void>) | null,
  };

  const hooks = {
    async onStep(step: PipelineStepNumber) {
      steps.push(step);
      if (harness.crashAt === step) throw new SimulatedCrash(step);
      await harness.onStep?.(step);
    },
  };

  async function newWorker(owner: string, options: WorkerOptions = {}): Promise<PipelineWorker> {
    let fence = options.fence;
    if (fence === undefined) {
      const acquired = await stores.runs.acquireLease(tenantId, runRow.id, owner, LEASE_TTL_MS, clock.now());
      if (acquired === null) throw new Error(`${owner} could not acquire the run lease`);
      fence = { runId: runRow.id, fencingToken: acquired.fencingToken };
    }
    const durable: DurableDeps = {
      invocations: options.invocations ?? stores.invocations,
      runs: stores.runs,
      approvals: stores.approvals,
      artifacts,
      credentials,
      owner,
      inFlight: new Set(),
      outputs: { inlineMaximumBytes: options.inlineMaximumBytes ?? INLINE_MAXIMUM_BYTES },
      maximumAttempts: 5,
    };
    const deps: PipelineDeps = { registry, validator, policy: options.policy ?? policy, clock, hooks, durable };
    const run: RunContext = {
      fence,
      deadlineAt,
      parallelGroup: null,
      workspace: workspaceService(path.join(folders.root, 'workspaces')).handle(folders.workspace),
    };
    return {
      owner,
      fence,
      deps,
      durable,
      run,
      execute: (request, adjust = {}) => executeToolCall(deps, session, request, { dryRun: false, run: { ...run, ...adjust } }),
    };
  }

  const worker = await newWorker('worker-a');

  async function events(): Promise<EventRow[]> {
    return stores.events.listAfter(tenantId, runRow.id, 0, 10_000);
  }

  async function invocation(invocationId: string): Promise<InvocationRow> {
    const row = await stores.invocations.getById(tenantId, invocationId);
    if (row === null) throw new Error(`no invocation ${invocationId}`);
    return row;
  }

  return Object.assign(harness, {
    driver,
    database,
    stores,
    clock,
    registry,
    validator,
    policy,
    credentials,
    blobs,
    tenantId,
    sessionId: sessionRow.id,
    runId: runRow.id,
    deadlineAt,
    principal,
    pinned,
    session,
    folders,
    probes,
    steps,
    worker,
    probe(toolName: string): ToolProbe {
      const probe = probes.get(toolName);
      if (probe === undefined) throw new Error(`no tool ${toolName}`);
      return probe;
    },
    call(toolName: string, args: unknown, over: Partial<ToolCallRequest> = {}): ToolCallRequest {
      callCounter += 1;
      return {
        tenantId,
        principal,
        sessionId: sessionRow.id,
        runId: runRow.id,
        stepNumber: 1,
        callId: `call_${callCounter}`,
        toolName,
        arguments: args,
        origin: 'model',
        contextTrust: ['user'],
        ...over,
      };
    },
    execute: worker.execute,
    newWorker,
    async takeOver(owner: string, options?: WorkerOptions): Promise<PipelineWorker> {
      clock.advance(LEASE_TTL_MS + 1);
      return newWorker(owner, options);
    },
    events,
    async eventsOf(invocationId: string): Promise<EventRow[]> {
      return (await events()).filter((e) => e.payload.invocation_id === invocationId);
    },
    invocation,
    async invocationOfCall(callId: string): Promise<InvocationRow> {
      const rows = (await stores.invocations.listForRun(tenantId, runRow.id)).filter((r) => r.callId === callId);
      if (rows.length !== 1) throw new Error(`expected one invocation for ${callId}, found ${rows.length}`);
      return rows[0]!;
    },
    async outboxLines(): Promise<string[]> {
      const text = await readFile(folders.outbox, 'utf8').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return '';
        throw error;
      });
      return text.split('\n').filter((line) => line !== '');
    },
    /** Removes the scene's folders; the database stays open for the next scene. */
    async close(): Promise<void> {
      await rm(root, { recursive: true, force: true });
    },
  });
}

/** The conclusion of a pipeline result, or a thrown error naming what came back instead. */
export function concludedOf(result: PipelineResult) {
  if (result.kind !== 'concluded') throw new Error(`expected a concluded call, got ${result.kind}`);
  return result;
}
