import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { mcpToolName, type Principal } from '@veetbot/domain';
import type { AgentSpec, Clock, RuntimeEnvironment, Stores, ToolMetrics } from '@veetbot/ports';
import { createArtifactWriterFactory, FolderBlobStore } from '@veetbot/blob-store-folder';
import { DefaultCredentialBroker } from '@veetbot/credential-broker';
import { executeToolCall, type DurableDeps, type PipelineDeps, type PipelineHooks, type RunContext, type SessionView, type ToolCallRequest } from '@veetbot/executor';
import { DefaultEgressPolicy, McpAdapter, validateServerConfig, type McpServerConfig } from '@veetbot/mcp-adapter';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { ToolRegistryImpl } from '@veetbot/registry';
import { createStores, type Database } from '@veetbot/store-postgres';
import { createBuiltinTools } from '@veetbot/tools-builtin';
import { AjvSchemaValidator } from '@veetbot/validation';

/**
 * The MCP benchmarks' composition: the MCP adapter and the durable pipeline, composed as
 * apps/integration-tests/src/mcp-harness.ts composes them for a session — tenant →
 * adapter.prepareSession (connect, initialize, tools/list, map, registerDynamic) →
 * registry.specsForSession (the pin) → session row → run → lease — on the system clock.
 */

const require = createRequire(import.meta.url);

/** The real @modelcontextprotocol/server-everything from npm, started by path over stdio. */
export const EVERYTHING_ENTRY = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
/** The scripted 500-tool stdio server (plain JavaScript: node starts it with no loader). */
export const MANY_TOOLS_SERVER = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'servers', 'many-tools-server.mjs');

const systemClock: Clock = { now: () => new Date() };
const LEASE_TTL_MS = 3_600_000;

/**
 * An operator stdio server. The classification is the one the issue-3 subject has
 * (external_write, NON_IDEMPOTENT): its governed call makes the same four commits — intent,
 * claim, effect watermark, result — so "the durable floor" is that call's floor exactly.
 * LOW risk, so the default policy allows it from a USER-trust turn without approval.
 */
export function stdioServerConfig(serverId: string, command: string, args: readonly string[]): McpServerConfig {
  const verdict = validateServerConfig(
    {
      serverId,
      transport: 'stdio',
      endpoint: command,
      args: [...args],
      authScheme: 'none',
      sideEffect: 'external_write',
      risk: 'low',
      idempotency: 'non_idempotent',
      requiredScopes: [`mcp.${serverId}.use`],
    },
    { source: 'operator', egress: new DefaultEgressPolicy() },
  );
  if (!verdict.ok) throw new Error(`server configuration refused: ${JSON.stringify(verdict.errors)}`);
  return verdict.config;
}

/** One adapter, one registry, one tenant: what a worker holds for a tenant's sessions. */
export interface McpWorld {
  readonly stores: Stores;
  readonly validator: AjvSchemaValidator;
  readonly registry: ToolRegistryImpl;
  readonly policy: DefaultPolicyEngine;
  readonly adapter: McpAdapter;
  readonly tenantId: string;
  readonly principal: Principal;
  readonly agent: AgentSpec;
  readonly environment: RuntimeEnvironment;
  readonly root: string;
  close(): Promise<void>;
}

export async function openMcpWorld(database: Database, servers: readonly McpServerConfig[], options: { metrics?: ToolMetrics } = {}): Promise<McpWorld> {
  const stores = createStores(database);
  const root = await mkdtemp(path.join(tmpdir(), 'veetbot-bench-mcp-'));
  await mkdir(path.join(root, 'workspace'), { recursive: true });
  const validator = new AjvSchemaValidator();
  const registry = new ToolRegistryImpl({ validator, globalMaximumOutputBytes: 1024 * 1024, flags: {} });
  registry.registerBuiltins(createBuiltinTools({ outboxPath: path.join(root, 'outbox.log'), clock: systemClock }));
  const policy = new DefaultPolicyEngine();
  const tenantId = `bench-mcp-${globalThis.crypto.randomUUID()}`;
  const principal: Principal = { tenant_id: tenantId, principal_id: 'bench-principal', scopes: servers.flatMap((s) => s.requiredScopes) };
  await stores.tenants.create({ id: tenantId, name: 'MCP benchmark tenant', createdAt: systemClock.now() });
  const list = [...servers];
  const adapter = new McpAdapter({
    servers: { list: async (id: string) => (id === tenantId ? list : []) },
    catalog: stores.mcpCatalog,
    events: stores.events,
    skills: stores.skills,
    credentials: new DefaultCredentialBroker({ env: {} }),
    validator,
    egress: new DefaultEgressPolicy(),
    clock: systemClock,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  });
  return {
    stores,
    validator,
    registry,
    policy,
    adapter,
    tenantId,
    principal,
    agent: { agentId: 'bench-agent' },
    environment: { flags: {}, targetKinds: ['in_process', 'mcp'] },
    root,
    async close() {
      try {
        await adapter.shutdown();
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Session open with discovery, as the worker does it: prepare (connect, initialize,
 * tools/list, map, admit, registerDynamic, catalog generation, mcp.* events), pin, session row.
 */
export async function openSession(world: McpWorld): Promise<{ sessionId: string; view: SessionView; toolCount: number; preparation: Awaited<ReturnType<McpAdapter['prepareSession']>> }> {
  const sessionId = globalThis.crypto.randomUUID();
  const preparation = await world.adapter.prepareSession({ tenantId: world.tenantId, sessionId, principal: world.principal }, (tools) => world.registry.registerDynamic(tools, 'mcp'));
  const pinned = world.registry.specsForSession(world.agent, world.principal, world.policy, world.environment);
  await world.stores.sessions.create(world.tenantId, {
    id: sessionId,
    principalId: world.principal.principal_id,
    agentId: world.agent.agentId,
    toolNames: pinned.toolNames,
    specs: pinned.specs,
    toolSchemaSha256: pinned.toolSchemaSha256,
    createdAt: systemClock.now(),
  });
  return { sessionId, view: { agent: world.agent, pinned }, toolCount: pinned.toolNames.filter((n) => n.startsWith('mcp.')).length, preparation };
}

export interface GovernedMcpCall {
  /** One governed tools/call through executeToolCall (steps 1–14), a call id never used before. Throws unless it SUCCEEDED. */
  call(): Promise<void>;
  readonly toolName: string;
  close(): Promise<void>;
}

/** A session on `world` and a run whose lease this process holds; calls go to `remoteTool` of `serverId`. */
export async function openGovernedMcpCall(world: McpWorld, serverId: string, remoteTool: string, args: Record<string, unknown>, options: { hooks?: PipelineHooks } = {}): Promise<GovernedMcpCall> {
  const { sessionId, view, preparation } = await openSession(world);
  const failed = preparation.servers.filter((s) => s.status === 'failed');
  if (failed.length > 0) throw new Error(`MCP preparation failed: ${failed.map((s) => `${s.serverId} ${s.reasonCode}`).join(', ')}`);
  const toolName = mcpToolName(serverId, remoteTool);
  if (!view.pinned?.toolNames.includes(toolName)) throw new Error(`${toolName} is not in the session's pinned tools`);

  const now = systemClock.now();
  const deadlineAt = new Date(now.getTime() + LEASE_TTL_MS);
  const owner = `bench-mcp-worker-${process.pid}`;
  const run = await world.stores.runs.create(world.tenantId, { sessionId, deadlineAt, budgets: {}, createdAt: now });
  const lease = await world.stores.runs.acquireLease(world.tenantId, run.id, owner, LEASE_TTL_MS, systemClock.now());
  if (lease === null) throw new Error('the benchmark worker could not take its run lease');
  const artifacts = createArtifactWriterFactory({ blobs: new FolderBlobStore({ root: path.join(world.root, 'blobs') }), artifacts: world.stores.artifacts, clock: systemClock });
  const durable: DurableDeps = {
    invocations: world.stores.invocations,
    runs: world.stores.runs,
    approvals: world.stores.approvals,
    artifacts,
    credentials: new DefaultCredentialBroker({ env: {} }),
    owner,
    inFlight: new Set(),
    outputs: { inlineMaximumBytes: 4096 },
    maximumAttempts: 5,
  };
  const deps: PipelineDeps = { registry: world.registry, validator: world.validator, policy: world.policy, clock: systemClock, durable, ...(options.hooks === undefined ? {} : { hooks: options.hooks }) };
  const runContext: RunContext = { fence: { runId: run.id, fencingToken: lease.fencingToken }, deadlineAt, parallelGroup: null, workspace: { root: path.join(world.root, 'workspace') } };

  let calls = 0;
  return {
    toolName,
    async call(): Promise<void> {
      calls += 1;
      const request: ToolCallRequest = {
        tenantId: world.tenantId,
        principal: world.principal,
        sessionId,
        runId: run.id,
        stepNumber: 1,
        callId: `call_${calls}`,
        toolName,
        arguments: args,
        origin: 'model',
        contextTrust: ['user'],
      };
      const result = await executeToolCall(deps, view, request, { dryRun: false, run: runContext });
      if (result.kind !== 'concluded' || result.invocationStatus !== 'succeeded') {
        const detail = result.kind === 'concluded' ? ` ${result.invocationStatus} ${result.item.outcome.reason_code}` : '';
        throw new Error(`governed MCP call did not succeed: ${result.kind}${detail}`);
      }
    },
    close: () => world.adapter.releaseSession(sessionId),
  };
}
