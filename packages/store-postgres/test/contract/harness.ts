import { randomUUID } from 'node:crypto';
import { argumentsHash, idempotencyKey } from '@veetbot/domain';
import type { LeaseFence, NewEvent, NewInvocation, Stores } from '@veetbot/ports';
import type { Database } from '../../src/database';

/**
 * What every contract suite runs against (Hono's one-suite-per-interface pattern): one
 * migrated database and the stores on it. Suites take a getter because the harness is built
 * in the driver file's beforeAll.
 */
export interface StoreHarness {
  readonly database: Database;
  readonly stores: Stores;
}
export type HarnessFactory = () => StoreHarness;

/** A fresh tenant with one session and one run: every test gets its own, so suites share one database. */
export interface Scene {
  readonly tenantId: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly t0: Date;
}

export async function newScene(h: StoreHarness): Promise<Scene> {
  const tenantId = `tenant-${randomUUID()}`;
  const t0 = new Date(Date.UTC(2030, 0, 1, 12, 0, 0));
  await h.stores.tenants.create({ id: tenantId, name: 'Test tenant', createdAt: t0 });
  const session = await h.stores.sessions.create(tenantId, {
    principalId: 'principal-1',
    agentId: 'agent-1',
    toolNames: ['demo.echo'],
    specs: [],
    toolSchemaSha256: 'a'.repeat(64),
    createdAt: t0,
  });
  const run = await newRun(h, tenantId, session.id, t0);
  return { tenantId, sessionId: session.id, runId: run, t0 };
}

export async function newRun(h: StoreHarness, tenantId: string, sessionId: string, t0: Date): Promise<string> {
  const run = await h.stores.runs.create(tenantId, {
    sessionId,
    deadlineAt: new Date(t0.getTime() + 3_600_000),
    budgets: { tool_calls: 100 },
    createdAt: t0,
  });
  return run.id;
}

export async function lease(h: StoreHarness, scene: Scene, owner: string, now: Date, ttlMs = 30_000): Promise<LeaseFence> {
  const acquired = await h.stores.runs.acquireLease(scene.tenantId, scene.runId, owner, ttlMs, now);
  if (!acquired) throw new Error(`lease for ${owner} was not acquired`);
  return { runId: scene.runId, fencingToken: acquired.fencingToken };
}

let callCounter = 0;

/** A step-8 row with a real idempotency key (§ The key). */
export function intent(scene: Scene, overrides: Partial<NewInvocation> = {}): NewInvocation & { id: string } {
  callCounter += 1;
  const args = { path: `/tmp/file-${callCounter}.txt` };
  const hash = argumentsHash(args);
  const base = {
    runId: scene.runId,
    sessionId: scene.sessionId,
    stepNumber: 1,
    callId: `call_${callCounter}`,
    toolName: 'demo.external_write',
    toolVersion: '1.0.0',
  };
  return {
    id: randomUUID(),
    ...base,
    status: 'authorized',
    idempotencyKey: idempotencyKey({ ...base, argumentsHash: hash }),
    argumentsHash: hash,
    arguments: args,
    toolSource: 'builtin',
    serverId: null,
    idempotencyClass: 'non_idempotent',
    originTrust: 'user',
    parallelGroup: null,
    createdAt: scene.t0,
    ...overrides,
  } as NewInvocation & { id: string };
}

/** A tool event with identity and classification only (§ Events and telemetry). */
export function toolEvent(
  scene: Scene,
  type: `tool.call.${string}`,
  invocation: { id: string; callId: string; toolName: string; stepNumber: number },
  at: Date,
  extra: Record<string, unknown> = {},
): NewEvent {
  return {
    runId: scene.runId,
    type,
    payload: {
      invocation_id: invocation.id,
      run_id: scene.runId,
      step_number: invocation.stepNumber,
      call_id: invocation.callId,
      tool_name: invocation.toolName,
      ...extra,
    },
    derivationKey: `${type}:${invocation.id}:${at.getTime()}`,
    createdAt: at,
  };
}

export const later = (t: Date, ms: number): Date => new Date(t.getTime() + ms);

/** The rows of a raw `tx.execute` result (both drivers return `{ rows }`). */
export function rowsOf<T = Record<string, unknown>>(result: unknown): T[] {
  return (result as { rows: T[] }).rows;
}
