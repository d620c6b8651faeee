import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Principal } from '@veetbot/domain';
import type { EventRow, InvocationRow, Stores } from '@veetbot/ports';
import type { StepSubmission, SubmittedCall } from '@veetbot/runtime';
import { crashChildCommand, CrashChildPool, type ChildCommand, type CrashChild } from './crash-child-process';
import type { CrashJob, EffectPoint } from './crash-job';
import { outboxFile, readOutbox, type OutboxRecord } from './crash-tools';
import { composeCrashWorld, crashFolders, crashRegistry, type CrashFolders, type CrashWorld, type CrashWorldOptions } from './crash-world';
import { openTestDatabase, type Driver, type TestDatabase } from './test-database';

/**
 * One database, one tenant, one session and a pool of warm crash children for a whole test
 * file; a fresh run per case. The session is opened by a Runtime composed exactly as the
 * children compose theirs (crash-world.ts), so both sides pin the same tool set. On PGlite
 * (driver 'pglite', ADR 0026) there are no children: the database lives in this process's
 * memory and a second process cannot reach it, so only the in-process Runtimes of `world()` run.
 */

/** The children's run lease: short, so a dead or paused child's lease expires quickly. */
export const CHILD_LEASE_TTL_MS = 2_000;

export const TERMINAL_EVENTS: ReadonlySet<string> = new Set([
  'tool.call.completed',
  'tool.call.failed',
  'tool.call.denied',
  'tool.call.uncertain',
]);

export interface ChildJobOptions {
  readonly runId: string;
  readonly calls: readonly SubmittedCall[];
  readonly dieAtStep?: number | null;
  readonly inTool?: { readonly point: EffectPoint; readonly action: 'die' | 'wait' } | null;
  readonly barrier?: boolean;
}

export interface CrashScene {
  readonly database: TestDatabase;
  readonly stores: Stores;
  readonly folders: CrashFolders;
  readonly tenantId: string;
  readonly principal: Principal;
  readonly sessionId: string;
  /**
   * A new Runtime of the test process (a worker, a recovering worker) with its own owner id and
   * in-flight state; the tools (no effect hooks) are registered once per scene unless `effects` is given.
   */
  world(owner: string, options?: Omit<CrashWorldOptions, 'stores' | 'owner' | 'folders' | 'registry'>): CrashWorld;
  /** The api's Runtime: opened the session, creates runs, resubmits steps. */
  readonly api: CrashWorld;
  newRun(): Promise<string>;
  submission(runId: string, calls: readonly SubmittedCall[], stepNumber?: number): StepSubmission;
  /** Hands a job to a child from the warm pool; `ready` carries its owner id and connection tag. */
  child(options: ChildJobOptions): { child: CrashChild; job: CrashJob };
  outbox(toolName: string): Promise<OutboxRecord[]>;
  rows(runId: string): Promise<InvocationRow[]>;
  eventsOf(runId: string, invocationId: string): Promise<EventRow[]>;
  close(): Promise<void>;
}

/** `warmChildren`: how many crash children to keep warm (default 1; 0: none, the scene's `child()` then throws). */
export async function openCrashScene(options: { warmChildren?: number; driver?: Driver } = {}): Promise<CrashScene> {
  const driver = options.driver ?? 'postgres';
  const database = await openTestDatabase(driver);
  const cleanup: (() => Promise<unknown>)[] = [() => database.close()];
  try {
    const root = await mkdtemp(path.join(tmpdir(), 'veetbot-crash-'));
    cleanup.unshift(() => rm(root, { recursive: true, force: true }));
    const folders = crashFolders(root);
    await mkdir(folders.outbox, { recursive: true });
    // No children on PGlite (unreachable from another process), nor when the file asks for none.
    let pool: CrashChildPool | null = null;
    if (database.url !== null && (options.warmChildren ?? 1) > 0) {
      const command: ChildCommand = await crashChildCommand();
      cleanup.unshift(() => command.dispose());
      const children = new CrashChildPool(
        command,
        { databaseUrl: database.url, leaseTtlMs: CHILD_LEASE_TTL_MS, folders },
        options.warmChildren ?? 1,
      );
      cleanup.unshift(() => children.close());
      pool = children;
    }

    const stores = database.stores;
    const tenantId = `crash-tenant-${globalThis.crypto.randomUUID()}`;
    await stores.tenants.create({ id: tenantId, name: 'Crash test tenant', createdAt: new Date() });
    const principal: Principal = {
      tenant_id: tenantId,
      principal_id: 'principal-1',
      scopes: ['workspace.read', 'workspace.write', 'demo.write'],
    };
    const shared = crashRegistry(folders);
    const world: CrashScene['world'] = (owner, extra = {}) =>
      composeCrashWorld({ ...extra, stores, owner, folders, ...(extra.effects === undefined ? { registry: shared } : {}) });
    const api = world('api-1');
    const session = await api.runtime.openSession(tenantId, principal, { agentId: 'agent-1' }, { flags: {}, targetKinds: ['in_process'] });

    return {
      database,
      stores,
      folders,
      tenantId,
      principal,
      sessionId: session.id,
      world,
      api,
      async newRun() {
        const run = await api.runtime.createRun(tenantId, session.id, { deadlineAt: new Date(Date.now() + 3_600_000) });
        return run.id;
      },
      submission(runId, calls, stepNumber = 1) {
        return { tenantId, runId, stepNumber, principal, calls: [...calls] };
      },
      child(jobOptions) {
        if (pool === null)
          throw new Error(
            `this scene has no crash children (driver ${driver}, warmChildren ${String(options.warmChildren ?? 1)}): they need a database server and warmChildren > 0`,
          );
        const job: CrashJob = {
          submission: {
            tenantId,
            runId: jobOptions.runId,
            stepNumber: 1,
            principal,
            calls: jobOptions.calls.map((c) => ({
              callId: c.callId,
              toolName: c.toolName,
              arguments: c.arguments,
              contextTrust: [...c.contextTrust],
            })),
          },
          dieAtStep: jobOptions.dieAtStep ?? null,
          inTool: jobOptions.inTool ?? null,
          barrier: jobOptions.barrier ?? false,
        };
        return { child: pool.run(job), job };
      },
      outbox: (toolName) => readOutbox(outboxFile(folders.outbox, toolName)),
      rows: (runId) => stores.invocations.listForRun(tenantId, runId),
      async eventsOf(runId, invocationId) {
        return (await stores.events.listAfter(tenantId, runId, 0, 10_000)).filter((e) => e.payload.invocation_id === invocationId);
      },
      async close() {
        for (const step of cleanup.splice(0)) await step().catch(() => undefined);
      },
    };
  } catch (error) {
    for (const step of cleanup.splice(0)) await step().catch(() => undefined);
    throw error;
  }
}

/** A model call whose turn saw USER content only. */
export function modelCall(callId: string, toolName: string, args: unknown): SubmittedCall {
  return { callId, toolName, arguments: args, contextTrust: ['user'] };
}

/** The arguments each tool takes: demo.external_write a line, the crash tools an item. */
export function argumentsFor(toolName: string, text: string): Record<string, string> {
  return toolName === 'demo.external_write' ? { line: text } : { item: text };
}
