import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { workspaceService } from './workspace-service';
import type { Principal, ToolResultItem } from '@veetbot/domain';
import type {
  AgentSpec,
  EventRow,
  InvocationRow,
  LeaseFence,
  PinnedToolSet,
  PolicyEngine,
  RuntimeEnvironment,
  Stores,
  ToolMetrics,
} from '@veetbot/ports';
import { AjvSchemaValidator } from '@veetbot/validation';
import { InMemoryToolRegistry } from '@veetbot/registry';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { createBuiltinTools } from '@veetbot/tools-builtin';
import { createArtifactWriterFactory, FolderBlobStore } from '@veetbot/blob-store-folder';
import { DefaultCredentialResolver, openCredentialBroker, operatorCredentialBroker } from '@veetbot/credential-broker';
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
import { DefaultEgressPolicy, McpAdapter, operatorServers, type McpServerConfig } from '@veetbot/mcp-adapter';
import { LEASE_TTL_MS, T0, TestClock } from './pipeline-harness';
import { stdioCommand } from './mcp-servers';
import type { TestDatabase } from './test-database';

/**
 * The durable pipeline with the MCP adapter composed in, as a worker composes it for a session
 * (pipeline-harness.ts's parts — real validator, registry, default policy, stores, folder blob
 * store, credential broker, the harness clock, a run with a lease — in the order a session
 * opens with MCP servers: § Discovery "runs at session open, before the context plan is built,
 * because the context engine pins the tool set and the pin must include MCP tools"):
 *
 *   tenant → adapter.prepareSession (connect, initialize, tools/list, map, registerDynamic)
 *          → registry.specsForSession (the pin) → session row → run → lease.
 *
 * Calls then go through the one executeToolCall with a step hook recording the sequence.
 */

/** Large enough that an echoed environment is never excerpted: Gate 16 parses it whole. */
export const MCP_INLINE_MAXIMUM_BYTES = 64 * 1024;

export type McpServerSpec = McpServerConfig;

/** A tenant HTTP server configuration with the defaults these tests use (read-only, no auth). */
export function httpServer(serverId: string, url: string, over: Partial<McpServerConfig> = {}): McpServerConfig {
  return {
    serverId,
    transport: 'http',
    endpoint: url,
    authScheme: 'none',
    authName: null,
    credentialRef: null,
    tokenEndpoint: null,
    tokenScopes: null,
    sideEffect: 'external_read',
    risk: 'low',
    idempotency: 'read_only',
    requiredScopes: [`mcp.${serverId}.use`],
    timeoutSeconds: 15,
    maximumOutputBytes: 64 * 1024,
    enabled: true,
    connectTimeoutSeconds: 10,
    requestTimeoutSeconds: 15,
    ...over,
  } as McpServerConfig;
}

/** An operator stdio server started from one of servers/*.ts. */
export function stdioServer(serverId: string, file: string, over: Partial<McpServerConfig> = {}): McpServerConfig {
  const { command, args } = stdioCommand(file);
  return httpServer(serverId, command, { transport: 'stdio', args, sideEffect: 'none', ...over });
}

export interface McpSceneOptions {
  readonly servers: readonly McpServerConfig[];
  /** What `env:NAME` credential references resolve to. The object is live: change it to rotate. */
  readonly brokerEnv?: Record<string, string>;
  /** § Spans and metrics: handed to the adapter and the pipeline alike, as a worker does. */
  readonly metrics?: ToolMetrics;
  /** The pipeline's policy engine (the pin is always made under the shipped profile). */
  readonly policy?: PolicyEngine;
  /**
   * Servers the tenant registered (origin tenant, ADR 0017): they name `secret:NAME`
   * references, resolved from `tenantSecrets` — sealed into the tenant_secrets store with a
   * fresh key, read back by the real broker, as a worker does.
   */
  readonly tenantServers?: readonly McpServerConfig[];
  readonly tenantSecrets?: Readonly<Record<string, string>>;
  /**
   * Recovery by another worker (issue 25): join the tenant, session and run a worker process
   * created (and died in) instead of creating them, as `owner`, with the clock at `startAt` —
   * past the dead worker's lease — so the run's lease is taken over.
   */
  readonly attach?: { readonly tenantId: string; readonly sessionId: string; readonly runId: string };
  readonly owner?: string;
  readonly startAt?: Date;
}

export interface McpScene {
  readonly stores: Stores;
  readonly clock: TestClock;
  readonly registry: InMemoryToolRegistry;
  readonly policy: DefaultPolicyEngine;
  readonly adapter: McpAdapter;
  readonly preparation: Awaited<ReturnType<McpAdapter['prepareSession']>>;
  /** The broker's variables (live: a test rotates a credential by assigning here). */
  readonly brokerEnv: Record<string, string>;
  readonly tenantId: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly principal: Principal;
  readonly agent: AgentSpec;
  readonly environment: RuntimeEnvironment;
  /** The pin the session holds (what the model was shown). */
  readonly pinned: PinnedToolSet;
  readonly session: SessionView;
  /** Steps as they began (reset freely: `scene.steps.length = 0`). */
  readonly steps: PipelineStepNumber[];
  /** A model call in this run; the turn saw USER content only. */
  call(toolName: string, args: unknown, over?: Partial<ToolCallRequest>): ToolCallRequest;
  /** `adjust`: this call's run context differs (a nearer run deadline, a caller's timeout). */
  execute(request: ToolCallRequest, adjust?: Partial<RunContext>): Promise<PipelineResult>;
  /** call + execute, and the concluded item (throws when the call did not conclude). */
  run(
    toolName: string,
    args: unknown,
    over?: Partial<ToolCallRequest>,
    adjust?: Partial<RunContext>,
  ): Promise<{ item: ToolResultItem; row: InvocationRow }>;
  /** Every event of this tenant: the run's stream and the tenant's run-less stream. */
  events(): Promise<EventRow[]>;
  eventsOfType(type: string): Promise<EventRow[]>;
  close(): Promise<void>;
}

let sceneCounter = 0;

export async function openMcpScene(database: TestDatabase, options: McpSceneOptions): Promise<McpScene> {
  sceneCounter += 1;
  const stores = database.stores;
  const root = await mkdtemp(path.join(tmpdir(), 'veetbot-mcp-'));
  const folders = {
    // The provider's layout, which the confined workspace helper serves (docs/adr/0058).
    workspace: path.join(root, 'workspaces', 'ab'.repeat(16), randomUUID()),
    outbox: path.join(root, 'outbox', 'outbox.log'),
    blobs: path.join(root, 'blobs'),
  };
  await mkdir(folders.workspace, { recursive: true });

  const clock = new TestClock(options.startAt ?? T0);
  const owner = options.owner ?? 'worker-mcp';
  const validator = new AjvSchemaValidator();
  const registry = new InMemoryToolRegistry({ validator, globalMaximumOutputBytes: 1024 * 1024, flags: {} });
  registry.registerBuiltins(createBuiltinTools({ outboxPath: folders.outbox, clock }));
  const policy = new DefaultPolicyEngine();
  const brokerEnv = options.brokerEnv ?? {};
  const credentials = new DefaultCredentialResolver({ env: brokerEnv });
  const blobs = new FolderBlobStore({ root: folders.blobs });
  const artifacts = createArtifactWriterFactory({ blobs, artifacts: stores.artifacts, clock });

  const tenantId = options.attach?.tenantId ?? `tenant-mcp-${sceneCounter}-${globalThis.crypto.randomUUID()}`;
  const principal: Principal = {
    tenant_id: tenantId,
    principal_id: 'principal-1',
    scopes: [
      'workspace.read',
      'workspace.write',
      'demo.write',
      ...[...options.servers, ...(options.tenantServers ?? [])].flatMap((s) => s.requiredScopes),
    ],
  };
  const agent: AgentSpec = { agentId: 'agent-1' };
  const environment: RuntimeEnvironment = { flags: {}, targetKinds: ['in_process', 'mcp'] };
  if (options.attach === undefined) await stores.tenants.create({ id: tenantId, name: 'MCP test tenant', createdAt: T0 });

  const servers = [...options.servers];
  const tenantServers = (options.tenantServers ?? []).map((config) => ({ ...config, origin: 'tenant' as const }));
  // The real broker (docs/adr/0030), not a literal that ignores the origin: the operator's
  // alone, or with the tenant's sealed secrets when the scene has tenant servers.
  let credentialBroker = operatorCredentialBroker({ env: brokerEnv });
  if (options.tenantSecrets !== undefined) {
    const opened = await openCredentialBroker({
      env: { VEETBOT_SECRETS_KEY: randomBytes(32).toString('base64') },
      dataDir: null,
      secrets: stores.tenantSecrets,
    });
    credentialBroker = opened.broker;
    for (const [name, value] of Object.entries(options.tenantSecrets)) {
      const sealed = opened.keys.keyring.seal({ tenantId, name }, value);
      await stores.tenantSecrets.put(tenantId, { name, ciphertext: sealed.ciphertext, keyId: sealed.keyId, at: T0 });
    }
  }
  const adapter = new McpAdapter({
    // The test's `servers` are configured as the operator's (they name env: references);
    // `tenantServers` as the tenant's (secret: references).
    servers: {
      list: async (id: string) => (id === tenantId ? [...operatorServers(servers), ...tenantServers] : []),
      operator: () => operatorServers(servers),
    },
    catalog: stores.mcpCatalog,
    events: stores.events,
    skills: stores.skills,
    credentials: credentialBroker,
    validator,
    // The tests dial 127.0.0.1 over plain http: the operator allowance RULINGS.md "Egress" names.
    egress: new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true }),
    clock,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  });

  const sessionId = options.attach?.sessionId ?? globalThis.crypto.randomUUID();
  let preparation: McpScene['preparation'];
  try {
    preparation = await adapter.prepareSession({ tenantId, sessionId, principal }, (tools) => registry.registerDynamic(tools, 'mcp'));
  } catch (error) {
    await adapter.shutdown();
    throw error;
  }
  const pinned = registry.specsForSession(agent, principal, policy, environment);
  if (options.attach === undefined) {
    await stores.sessions.create(tenantId, {
      id: sessionId,
      principalId: principal.principal_id,
      agentId: agent.agentId,
      toolNames: pinned.toolNames,
      specs: pinned.specs,
      toolSchemaSha256: pinned.toolSchemaSha256,
      createdAt: T0,
    });
  }
  const deadlineAt = new Date(T0.getTime() + 3_600_000);
  const runRow =
    options.attach === undefined
      ? await stores.runs.create(tenantId, { sessionId, deadlineAt, budgets: { tool_calls: 100 }, createdAt: T0 })
      : { id: options.attach.runId };
  const acquired = await stores.runs.acquireLease(tenantId, runRow.id, owner, LEASE_TTL_MS, clock.now());
  if (acquired === null) throw new Error('could not acquire the run lease');
  const fence: LeaseFence = { runId: runRow.id, fencingToken: acquired.fencingToken };

  const steps: PipelineStepNumber[] = [];
  const durable: DurableDeps = {
    invocations: stores.invocations,
    runs: stores.runs,
    approvals: stores.approvals,
    artifacts,
    credentials,
    owner,
    inFlight: new Set(),
    outputs: { inlineMaximumBytes: MCP_INLINE_MAXIMUM_BYTES },
    maximumAttempts: 5,
  };
  const deps: PipelineDeps = {
    registry,
    validator,
    policy: options.policy ?? policy,
    clock,
    hooks: { onStep: (n) => void steps.push(n) },
    durable,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  };
  const runContext: RunContext = {
    fence,
    deadlineAt,
    parallelGroup: null,
    workspace: workspaceService(path.join(root, 'workspaces')).handle(folders.workspace),
  };
  const session: SessionView = { agent, pinned };

  let callCounter = 0;
  const call = (toolName: string, args: unknown, over: Partial<ToolCallRequest> = {}): ToolCallRequest => {
    callCounter += 1;
    return {
      tenantId,
      principal,
      sessionId,
      runId: runRow.id,
      stepNumber: callCounter,
      callId: `call_${callCounter}`,
      toolName,
      arguments: args,
      origin: 'model',
      contextTrust: ['user'],
      ...over,
    };
  };
  const execute = (request: ToolCallRequest, adjust: Partial<RunContext> = {}) =>
    executeToolCall(deps, session, request, { dryRun: false, run: { ...runContext, ...adjust } });

  const events = async (): Promise<EventRow[]> => [
    ...(await stores.events.listAfter(tenantId, null, 0, 10_000)),
    ...(await stores.events.listAfter(tenantId, runRow.id, 0, 10_000)),
  ];

  let closed = false;
  return {
    stores,
    clock,
    registry,
    policy,
    adapter,
    preparation,
    brokerEnv,
    tenantId,
    sessionId,
    runId: runRow.id,
    principal,
    agent,
    environment,
    pinned,
    session,
    steps,
    call,
    execute,
    async run(toolName, args, over, adjust) {
      const request = call(toolName, args, over);
      const result = await execute(request, adjust);
      if (result.kind !== 'concluded') throw new Error(`expected ${toolName} to conclude, got ${result.kind}`);
      const rows = (await stores.invocations.listForRun(tenantId, runRow.id)).filter((r) => r.callId === request.callId);
      if (rows.length !== 1) throw new Error(`expected one invocation row for ${request.callId}, found ${rows.length}`);
      return { item: result.item, row: rows[0]! };
    },
    events,
    async eventsOfType(type) {
      return (await events()).filter((e) => e.type === type);
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await adapter.releaseSession(sessionId);
        await adapter.shutdown();
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    },
  };
}

/** The texts of an item's content parts, with their trust labels. */
export function textParts(item: ToolResultItem): { text: string; trust: string }[] {
  return item.content.flatMap((part) => (part.type === 'text' ? [{ text: part.text, trust: part.trust }] : []));
}

const ENVELOPE =
  /^\u27E6untrusted source="([^"]*)" trust="([a-z_]+)" nonce="([0-9a-f]{16})"\u27E7\n([\s\S]*)\n\u27E6\/untrusted nonce="\3"\u27E7$/;

/**
 * A content part's text as the model reads it is framed in a trust envelope (domain
 * trust-envelope.ts) when its trust is below USER. This takes the frame apart: the attribution,
 * the label and the span — or null when the text is not exactly one envelope.
 */
export function unwrapEnvelope(text: string): { source: string; trust: string; span: string } | null {
  const match = ENVELOPE.exec(text);
  return match === null ? null : { source: match[1]!, trust: match[2]!, span: match[4]! };
}
