import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Principal } from '@veetbot/domain';
import type { EgressPolicy } from '@veetbot/ports';
import { openMigratedMemoryDatabase, type Database } from '@veetbot/store-postgres';
import { buildApp, type ApiApp } from '../src/app';
import { composeSystem, type ComposedSystem } from '../src/compose';
import type { ApiSettings } from '../src/deps';
import { provisionTenantKey } from '@veetbot/composition';

/** Every scope the demo principal holds. */
export const ALL_SCOPES = [
  'approvals.decide',
  'review.resolve',
  'workspace.read',
  'workspace.write',
  'demo.write',
  'mcp.servers.write',
  'secrets.read',
  'secrets.write',
  'skills.read',
  'skills.write',
  'questions.answer',
] as const;

export interface TenantKeys {
  readonly tenantId: string;
  /** Every scope. */
  readonly key: string;
  /** The tools' scopes but neither approvals.decide nor review.resolve. */
  readonly plainKey: string;
  readonly principal: Principal;
}

export interface ApiHarness {
  readonly api: ApiApp;
  readonly system: ComposedSystem;
  readonly database: Database;
  readonly dataDir: string;
  readonly a: TenantKeys;
  readonly b: TenantKeys;
  readonly revokedKey: string;
  readonly errors: unknown[];
  call(
    method: string,
    path: string,
    options?: { key?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<Response>;
  outboxLines(): Promise<string[]>;
  close(): Promise<void>;
}

async function tenant(system: ComposedSystem, tenantId: string): Promise<TenantKeys> {
  const now = new Date();
  const full = await provisionTenantKey(system.stores, {
    tenantId,
    tenantName: tenantId,
    principalId: `${tenantId}-admin`,
    scopes: ALL_SCOPES,
    now,
  });
  const plain = await provisionTenantKey(system.stores, {
    tenantId,
    tenantName: tenantId,
    principalId: `${tenantId}-agent`,
    scopes: ['workspace.read', 'workspace.write', 'demo.write'],
    now,
  });
  return {
    tenantId,
    key: full.key,
    plainKey: plain.key,
    principal: { tenant_id: tenantId, principal_id: `${tenantId}-admin`, scopes: [...ALL_SCOPES] },
  };
}

/**
 * The api exactly as `pnpm start` composes it (compose.ts), over PGlite in memory and a temp
 * data folder, with the in-process WorkerLoop running (unless `worker: false`); requests go
 * through `app.request` in process. Two tenants, each with a full key and a key without the
 * decision scopes, and one revoked key.
 */
export async function openApiHarness(
  options: { worker?: boolean; apiSettings?: Partial<ApiSettings>; egress?: EgressPolicy } = {},
): Promise<ApiHarness> {
  // From a migrated template cached across test files (store-postgres memory-template.ts).
  const database = await openMigratedMemoryDatabase(join(tmpdir(), 'veetbot-pglite-templates'));
  const dataDir = await mkdtemp(join(tmpdir(), 'veetbot-api-'));
  const errors: unknown[] = [];
  const system = await composeSystem({
    database,
    dataDir,
    mcp: false,
    workerSettings: { pollIntervalMs: 100, sweepIntervalMs: 60_000 },
    apiSettings: { stepPollMs: 50, eventPollMs: 25, ...options.apiSettings },
    logError: (error) => errors.push(error),
    ...(options.egress === undefined ? {} : { egress: options.egress }),
  });
  if (options.worker !== false) system.worker.start();
  const api = buildApp(system.deps);
  const a = await tenant(system, 'tenant-a');
  const b = await tenant(system, 'tenant-b');
  const revoked = await provisionTenantKey(system.stores, {
    tenantId: 'tenant-a',
    tenantName: 'tenant-a',
    principalId: 'gone',
    scopes: [],
    now: new Date(),
  });
  await system.stores.apiKeys.revoke('tenant-a', revoked.keyId, new Date());

  return {
    api,
    system,
    database,
    dataDir,
    a,
    b,
    revokedKey: revoked.key,
    errors,
    async call(method, path, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      const key = o.key === undefined ? a.key : o.key;
      if (key !== null) headers.Authorization = `Bearer ${key}`;
      let body: string | undefined = o.rawBody;
      if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers['Content-Type'] = 'application/json';
      }
      return api.app.request(`http://api.test${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
    },
    async outboxLines() {
      const text = await readFile(join(dataDir, 'outbox.log'), 'utf8').catch(() => '');
      return text.split('\n').filter((l) => l !== '');
    },
    async close() {
      await system.close({ drainMs: 5000 });
      await database.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Open a session and a run for tenant `key` (every builtin enabled). */
export async function sessionAndRun(h: ApiHarness, key: string = h.a.key): Promise<{ sessionId: string; runId: string }> {
  const session = await h.call('POST', '/v1/sessions', { key, body: { agent_id: 'agent-1' } });
  if (session.status !== 201) throw new Error(`open session: ${session.status} ${await session.text()}`);
  const sessionId = ((await session.json()) as { id: string }).id;
  const run = await h.call('POST', '/v1/runs', { key, body: { session_id: sessionId, deadline_seconds: 600 } });
  if (run.status !== 201) throw new Error(`create run: ${run.status} ${await run.text()}`);
  return { sessionId, runId: ((await run.json()) as { id: string }).id };
}

export async function errorOf(response: Response): Promise<{ status: number; code: string; message: string; body: unknown }> {
  const body = (await response.json()) as { error: { code: string; message: string } };
  return { status: response.status, code: body.error.code, message: body.error.message, body };
}
