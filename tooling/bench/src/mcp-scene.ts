import { WorkspaceFileService } from '@veetbot/sandbox-adapter';
/** The one run folder the MCP scene's calls share (they use no workspace tool). */
const WORKSPACE_RUN = '00000000-0000-4000-8000-0000000000b1';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { mcpToolName, type Principal } from '@veetbot/domain';
import type { AgentSpec, Clock, EgressPolicy, RuntimeEnvironment, Stores, ToolMetrics } from '@veetbot/ports';
import { createArtifactWriterFactory, FolderBlobStore } from '@veetbot/blob-store-folder';
import { DefaultCredentialResolver, operatorCredentialBroker } from '@veetbot/credential-broker';
import {
  executeToolCall,
  type DurableDeps,
  type PipelineDeps,
  type PipelineHooks,
  type RunContext,
  type SessionView,
  type ToolCallRequest,
} from '@veetbot/executor';
import {
  DefaultEgressPolicy,
  McpAdapter,
  operatorServers,
  validateServerConfig,
  type McpServerConfig,
  type McpServerConfigInput,
} from '@veetbot/mcp-adapter';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { InMemoryToolRegistry } from '@veetbot/registry';
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

/**
 * The egress policy of a world whose HTTP server is on loopback: plain http and private
 * addresses allowed — the operator allowance RULINGS.md "Egress" names for tests (the
 * integration tests' mcp-harness.ts uses the same). Metadata endpoints stay refused.
 */
export function loopbackEgress(): DefaultEgressPolicy {
  return new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true });
}

/**
 * A tenant HTTP server, validated as a tenant's row is when it is written (§ Authentication:
 * "validated when it is written") against the policy that will check it when dialled. The
 * classification is stdioServerConfig's (external_write, LOW, NON_IDEMPOTENT), so a governed
 * call over HTTP makes the same four commits as one over stdio. A generous connect timeout:
 * someone else's server on a loaded two-core machine, which is not what is measured.
 */
export function httpServerConfig(
  serverId: string,
  url: string,
  egress: EgressPolicy,
  over: Partial<McpServerConfigInput> = {},
): McpServerConfig {
  const verdict = validateServerConfig(
    {
      serverId,
      transport: 'http',
      endpoint: url,
      authScheme: 'none',
      sideEffect: 'external_write',
      risk: 'low',
      idempotency: 'non_idempotent',
      requiredScopes: [`mcp.${serverId}.use`],
      connectTimeoutSeconds: 60,
      ...over,
    },
    { source: 'tenant', egress },
  );
  if (!verdict.ok) throw new Error(`server configuration refused: ${JSON.stringify(verdict.errors)}`);
  return verdict.config;
}

/** server-everything over Streamable HTTP, a real process: `PORT=… node dist/index.js streamableHttp`. */
export interface EverythingHttpServer {
  /** The MCP endpoint, on loopback. */
  readonly url: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * Start server-everything over Streamable HTTP (as apps/integration-tests/src/npm-servers.ts
 * does; an app is not a library, so the few lines are here again). It takes its port only from
 * PORT and listens on every interface, so the free port is probed on the wildcard address; the
 * client dials loopback. Its own minimal environment: someone else's deployment, not a child
 * that inherits ours. Ready when its stderr says it listens.
 */
export async function startEverythingHttp(): Promise<EverythingHttpServer> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, resolve);
  });
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  // It logs every request on stdout: ignored, so a long session cannot fill a pipe.
  const child: ChildProcess = spawn(process.execPath, [EVERYTHING_ENTRY, 'streamableHttp'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`server-everything (http) did not listen in 60 s: ${stderr}`)), 60_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.length < 16_384) stderr += chunk.toString('utf8');
      if (stderr.includes(`listening on port ${port}`)) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve();
      }
    });
    child.once('exit', (code) => fail(new Error(`server-everything (http) exited (${code}) before it listened: ${stderr}`)));
  });
  child.stderr!.resume();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** One adapter, one registry, one tenant: what a worker holds for a tenant's sessions. */
export interface McpWorld {
  readonly stores: Stores;
  readonly validator: AjvSchemaValidator;
  readonly registry: InMemoryToolRegistry;
  readonly policy: DefaultPolicyEngine;
  readonly adapter: McpAdapter;
  readonly tenantId: string;
  readonly principal: Principal;
  readonly agent: AgentSpec;
  readonly environment: RuntimeEnvironment;
  readonly root: string;
  close(): Promise<void>;
}

export async function openMcpWorld(
  database: Database,
  servers: readonly McpServerConfig[],
  options: { metrics?: ToolMetrics; egress?: EgressPolicy } = {},
): Promise<McpWorld> {
  const stores = createStores(database);
  const root = await mkdtemp(path.join(tmpdir(), 'veetbot-bench-mcp-'));
  // The provider's layout, served by the confined workspace helper (docs/adr/0058).
  await mkdir(path.join(root, 'workspaces', 'ab'.repeat(16), WORKSPACE_RUN), { recursive: true });
  const validator = new AjvSchemaValidator();
  const registry = new InMemoryToolRegistry({ validator, globalMaximumOutputBytes: 1024 * 1024, flags: {} });
  registry.registerBuiltins(createBuiltinTools({ outboxPath: path.join(root, 'outbox.log'), clock: systemClock }));
  const policy = new DefaultPolicyEngine();
  const tenantId = `bench-mcp-${globalThis.crypto.randomUUID()}`;
  const principal: Principal = { tenant_id: tenantId, principal_id: 'bench-principal', scopes: servers.flatMap((s) => s.requiredScopes) };
  await stores.tenants.create({ id: tenantId, name: 'MCP benchmark tenant', createdAt: systemClock.now() });
  const list = [...servers];
  const adapter = new McpAdapter({
    servers: { list: async (id: string) => (id === tenantId ? operatorServers(list) : []) },
    catalog: stores.mcpCatalog,
    events: stores.events,
    skills: stores.skills,
    credentials: operatorCredentialBroker({ env: {} }),
    validator,
    egress: options.egress ?? new DefaultEgressPolicy(),
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
export async function openSession(
  world: McpWorld,
): Promise<{ sessionId: string; view: SessionView; toolCount: number; preparation: Awaited<ReturnType<McpAdapter['prepareSession']>> }> {
  const sessionId = globalThis.crypto.randomUUID();
  const preparation = await world.adapter.prepareSession({ tenantId: world.tenantId, sessionId, principal: world.principal }, (tools) =>
    world.registry.registerDynamic(tools, 'mcp'),
  );
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
  return {
    sessionId,
    view: { agent: world.agent, pinned },
    toolCount: pinned.toolNames.filter((n) => n.startsWith('mcp.')).length,
    preparation,
  };
}

export interface GovernedMcpCall {
  /** One governed tools/call through executeToolCall (steps 1–14), a call id never used before, on caller `caller`'s run. Throws unless it SUCCEEDED. */
  call(caller?: number): Promise<void>;
  /**
   * One governed call of any pinned tool of the session (`toolName`, the mcp.* name) on caller
   * `caller`'s run: its invocation status and reason code. Throws only when it did not conclude.
   */
  attempt(caller: number, toolName: string, args: Record<string, unknown>): Promise<{ status: string; reasonCode: string | null }>;
  readonly toolName: string;
  close(): Promise<void>;
}

/**
 * A session on `world` and, per concurrent caller, a run whose lease this process holds (a
 * side-effecting call cannot share a parallel batch — § Parallel calls — so concurrent
 * side-effecting calls come from different runs, as in governed-scene.ts); calls go to
 * `remoteTool` of `serverId`.
 */
export async function openGovernedMcpCall(
  world: McpWorld,
  serverId: string,
  remoteTool: string,
  args: Record<string, unknown>,
  options: { hooks?: PipelineHooks; callers?: number } = {},
): Promise<GovernedMcpCall> {
  const { sessionId, view, preparation } = await openSession(world);
  const failed = preparation.servers.filter((s) => s.status === 'failed');
  if (failed.length > 0) throw new Error(`MCP preparation failed: ${failed.map((s) => `${s.serverId} ${s.reasonCode}`).join(', ')}`);
  const toolName = mcpToolName(serverId, remoteTool);
  if (!view.pinned?.toolNames.includes(toolName)) throw new Error(`${toolName} is not in the session's pinned tools`);

  const now = systemClock.now();
  const deadlineAt = new Date(now.getTime() + LEASE_TTL_MS);
  const owner = `bench-mcp-worker-${process.pid}`;
  const runs: { runId: string; context: RunContext }[] = [];
  for (let i = 0; i < Math.max(1, options.callers ?? 1); i++) {
    const run = await world.stores.runs.create(world.tenantId, { sessionId, deadlineAt, budgets: {}, createdAt: now });
    const lease = await world.stores.runs.acquireLease(world.tenantId, run.id, owner, LEASE_TTL_MS, systemClock.now());
    if (lease === null) throw new Error('the benchmark worker could not take its run lease');
    runs.push({
      runId: run.id,
      context: {
        fence: { runId: run.id, fencingToken: lease.fencingToken },
        deadlineAt,
        parallelGroup: null,
        workspace: new WorkspaceFileService({ workspaceRoot: path.join(world.root, 'workspaces') }).handle(
          path.join(world.root, 'workspaces', 'ab'.repeat(16), WORKSPACE_RUN),
        ),
      },
    });
  }
  const artifacts = createArtifactWriterFactory({
    blobs: new FolderBlobStore({ root: path.join(world.root, 'blobs') }),
    artifacts: world.stores.artifacts,
    clock: systemClock,
  });
  const durable: DurableDeps = {
    invocations: world.stores.invocations,
    runs: world.stores.runs,
    approvals: world.stores.approvals,
    artifacts,
    credentials: new DefaultCredentialResolver({ env: {} }),
    owner,
    inFlight: new Set(),
    outputs: { inlineMaximumBytes: 4096 },
    maximumAttempts: 5,
  };
  const deps: PipelineDeps = {
    registry: world.registry,
    validator: world.validator,
    policy: world.policy,
    clock: systemClock,
    durable,
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
  };

  let calls = 0;
  const attempt = async (caller: number, name: string, callArgs: Record<string, unknown>) => {
    const run = runs[caller % runs.length]!;
    calls += 1;
    const request: ToolCallRequest = {
      tenantId: world.tenantId,
      principal: world.principal,
      sessionId,
      runId: run.runId,
      stepNumber: 1,
      callId: `call_${calls}`,
      toolName: name,
      arguments: callArgs,
      origin: 'model',
      contextTrust: ['user'],
    };
    const result = await executeToolCall(deps, view, request, { dryRun: false, run: run.context });
    if (result.kind !== 'concluded') throw new Error(`governed MCP call did not conclude: ${result.kind}`);
    return { status: result.invocationStatus, reasonCode: result.item.outcome.reason_code ?? null };
  };
  return {
    toolName,
    async call(caller = 0): Promise<void> {
      const { status, reasonCode } = await attempt(caller, toolName, args);
      if (status !== 'succeeded') throw new Error(`governed MCP call did not succeed: concluded ${status} ${reasonCode}`);
    },
    attempt,
    close: () => world.adapter.releaseSession(sessionId),
  };
}
