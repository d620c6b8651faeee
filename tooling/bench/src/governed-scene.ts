import { randomUUID } from 'node:crypto';
import { WorkspaceFileService } from '@veetbot/sandbox-adapter';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Principal } from '@veetbot/domain';
import type { Clock, Stores } from '@veetbot/ports';
import { createArtifactWriterFactory, FolderBlobStore } from '@veetbot/blob-store-folder';
import { DefaultCredentialResolver } from '@veetbot/credential-broker';
import {
  executeToolCall,
  type DurableDeps,
  type PipelineDeps,
  type RunContext,
  type SessionView,
  type ToolCallRequest,
} from '@veetbot/executor';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { InMemoryToolRegistry } from '@veetbot/registry';
import { createStores, type Database } from '@veetbot/store-postgres';
import { createBuiltinTools } from '@veetbot/tools-builtin';
import { AjvSchemaValidator } from '@veetbot/validation';

/**
 * The subject of the durable benchmarks: one governed call of the builtin `demo.external_write`
 * (side_effect external_write, NON_IDEMPOTENT) through `executeToolCall` with DurableDeps —
 * all fourteen steps, as a worker runs each call of a step. Its commits: step 8 intent, step 9
 * claim, the effect watermark (its own commit, before the effect), step 13 result. The effect is
 * the builtin's own: one line appended to an outbox file (no fsync).
 *
 * Composed as a worker composes it (apps/integration-tests/src/pipeline-harness.ts): the real
 * validator, registry, default policy, stores, folder blob store and credential broker, on the
 * system clock. One tenant and session; one run per concurrent caller, each run's lease held
 * by this worker — a side-effecting call cannot share a parallel batch (§ Parallel calls: only
 * an all-READ_ONLY batch runs in parallel), so concurrent side-effecting calls come from
 * different runs.
 */
export const SUBJECT_TOOL = 'demo.external_write';

export interface GovernedScene {
  /** One governed call on caller `caller`'s run, with a call id never used before. Throws unless it SUCCEEDED. */
  call(caller: number): Promise<void>;
  /** Calls made so far. */
  readonly calls: number;
  close(): Promise<void>;
}

const systemClock: Clock = { now: () => new Date() };
/** Longer than any benchmark: no lease expires mid-run. */
const LEASE_TTL_MS = 3_600_000;

export async function openGovernedScene(database: Database, options: { callers: number }): Promise<GovernedScene> {
  const stores: Stores = createStores(database);
  const root = await mkdtemp(path.join(tmpdir(), 'veetbot-bench-'));
  // The provider's layout, served by the confined workspace helper (docs/adr/0058).
  const workspace = path.join(root, 'workspaces', 'ab'.repeat(16), randomUUID());
  await mkdir(workspace, { recursive: true });
  const workspaceFiles = new WorkspaceFileService({ workspaceRoot: path.join(root, 'workspaces') });

  const validator = new AjvSchemaValidator();
  const registry = new InMemoryToolRegistry({ validator, globalMaximumOutputBytes: 1024 * 1024, flags: {} });
  registry.registerBuiltins(createBuiltinTools({ outboxPath: path.join(root, 'outbox.log'), clock: systemClock }));
  const policy = new DefaultPolicyEngine();
  const artifacts = createArtifactWriterFactory({
    blobs: new FolderBlobStore({ root: path.join(root, 'blobs') }),
    artifacts: stores.artifacts,
    clock: systemClock,
  });

  const now = systemClock.now();
  const tenantId = `bench-${globalThis.crypto.randomUUID()}`;
  const principal: Principal = { tenant_id: tenantId, principal_id: 'bench-principal', scopes: ['demo.write'] };
  const agent = { agentId: 'bench-agent' };
  const pinned = registry.specsForSession(agent, principal, policy, { flags: {}, targetKinds: ['in_process'] });
  if (!pinned.toolNames.includes(SUBJECT_TOOL)) throw new Error(`${SUBJECT_TOOL} is not in the session's pinned tools`);
  await stores.tenants.create({ id: tenantId, name: 'Benchmark tenant', createdAt: now });
  const sessionRow = await stores.sessions.create(tenantId, {
    principalId: principal.principal_id,
    agentId: agent.agentId,
    toolNames: pinned.toolNames,
    specs: pinned.specs,
    toolSchemaSha256: pinned.toolSchemaSha256,
    createdAt: now,
  });
  const session: SessionView = { agent, pinned };

  const owner = `bench-worker-${process.pid}`;
  const durable: DurableDeps = {
    invocations: stores.invocations,
    runs: stores.runs,
    approvals: stores.approvals,
    artifacts,
    credentials: new DefaultCredentialResolver({ env: {} }),
    owner,
    inFlight: new Set(),
    outputs: { inlineMaximumBytes: 4096 },
    maximumAttempts: 5,
  };
  const deps: PipelineDeps = { registry, validator, policy, clock: systemClock, durable };

  const deadlineAt = new Date(now.getTime() + LEASE_TTL_MS);
  const runs: { runId: string; context: RunContext }[] = [];
  for (let i = 0; i < Math.max(1, options.callers); i++) {
    const run = await stores.runs.create(tenantId, { sessionId: sessionRow.id, deadlineAt, budgets: {}, createdAt: now });
    const lease = await stores.runs.acquireLease(tenantId, run.id, owner, LEASE_TTL_MS, systemClock.now());
    if (lease === null) throw new Error('the benchmark worker could not take its run lease');
    runs.push({
      runId: run.id,
      context: {
        fence: { runId: run.id, fencingToken: lease.fencingToken },
        deadlineAt,
        parallelGroup: null,
        workspace: workspaceFiles.handle(workspace),
      },
    });
  }

  let calls = 0;
  const args = { line: 'benchmark effect' };
  return {
    get calls() {
      return calls;
    },
    async call(caller: number): Promise<void> {
      const run = runs[caller % runs.length]!;
      calls += 1;
      const request: ToolCallRequest = {
        tenantId,
        principal,
        sessionId: sessionRow.id,
        runId: run.runId,
        stepNumber: 1,
        // Distinct per call: nothing dedups, every call inserts, claims, marks and completes.
        callId: `call_${calls}`,
        toolName: SUBJECT_TOOL,
        arguments: args,
        origin: 'model',
        contextTrust: ['user'],
      };
      const result = await executeToolCall(deps, session, request, { dryRun: false, run: run.context });
      if (result.kind !== 'concluded' || result.invocationStatus !== 'succeeded') {
        throw new Error(
          `benchmark call did not succeed: ${result.kind}${result.kind === 'concluded' ? ` ${result.invocationStatus}` : ''}`,
        );
      }
    },
    async close(): Promise<void> {
      await rm(root, { recursive: true, force: true });
    },
  };
}
