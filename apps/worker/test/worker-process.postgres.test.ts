import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Principal } from '@veetbot/domain';
import { toStoredBatch, type StepSubmission } from '@veetbot/runtime';
import { createDatabase, dropDatabase } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeSystem, openAndMigrate, readSettings, type ComposedSystem } from '@veetbot/composition';
import type { Database } from '@veetbot/store-postgres';
import { REPO, startWorker, until } from './worker-process-harness';

/**
 * The real worker process on PostgreSQL: a database that does not exist is one line with a
 * stable code; SIGTERM while a slow batch runs lets the batch finish and exits 0 with the run's
 * lease released. Needs a PostgreSQL server: without DATABASE_URL vitest.config.ts leaves this
 * file out (postgres-only.json) and the summary at the end of `pnpm test` says so (ADR 0026).
 */
const serverUrl = requiredDatabaseUrl();

function requiredDatabaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url)
    throw new Error(
      'DATABASE_URL is not set: this file needs PostgreSQL (postgres-only.json); run it with DATABASE_URL=postgres://postgres@127.0.0.1:5432/test',
    );
  return url;
}

describe('a database that does not exist', () => {
  it('is startup.database_missing naming the database, not a bare SQLSTATE 3D000', async () => {
    const missing = `veetbot_missing_${randomBytes(4).toString('hex')}`;
    const url = new URL(serverUrl);
    url.pathname = `/${missing}`;
    const dataDir = await mkdtemp(join(tmpdir(), 'veetbot-missing-'));
    const worker = startWorker({ DATABASE_URL: url.toString(), VEETBOT_DATA_DIR: dataDir, VEETBOT_WORKER_PORT: '0' });
    expect(await worker.exited).toEqual({ code: 1, signal: null });
    const lines = worker.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^error startup\\.database_missing: The database "${missing}" does not exist on the server at .*Create it \\(createdb ${missing}`,
      ),
    );
    expect(worker.stderr()).not.toContain('3D000');
    await rm(dataDir, { recursive: true, force: true });
  });
});

describe('the worker process on PostgreSQL', () => {
  const name = `veetbot_worker_${randomBytes(6).toString('hex')}`;
  let url = '';
  let dataDir = '';
  // The test's side of the database, composed the way the worker composes (the loop is never
  // started here): it opens the session and run and stores the step, as the api would.
  let api: ComposedSystem;
  let database: Database;

  beforeAll(async () => {
    url = await createDatabase(serverUrl, name);
    dataDir = await mkdtemp(join(tmpdir(), 'veetbot-worker-'));
    const settings = readSettings({ DATABASE_URL: url, VEETBOT_DATA_DIR: dataDir }, [], REPO, 'worker');
    database = await openAndMigrate(settings);
    api = await composeSystem({ database, dataDir, owner: 'test-api' });
  });

  afterAll(async () => {
    await api?.close({ drainMs: 0 });
    await database?.close();
    await dropDatabase(serverUrl, name);
    await rm(dataDir, { recursive: true, force: true });
  });

  const outboxLines = async (): Promise<string[]> => {
    const text = await readFile(join(dataDir, 'outbox.log'), 'utf8').catch(() => '');
    return text.split('\n').filter((l) => l !== '');
  };

  it('SIGTERM while a slow batch runs: the batch finishes, the lease is released, exit 0', async () => {
    const tenantId = `tenant-${randomBytes(4).toString('hex')}`;
    await api.stores.tenants.create({ id: tenantId, name: 'Worker process test', createdAt: new Date() });
    const principal: Principal = {
      tenant_id: tenantId,
      principal_id: 'agent-owner',
      scopes: ['demo.write', 'workspace.read', 'workspace.write'],
    };
    const session = await api.runtime.openSession(tenantId, principal, { agentId: 'agent' }, { flags: {}, targetKinds: ['in_process'] });
    const run = await api.runtime.createRun(tenantId, session.id, { deadlineAt: new Date(Date.now() + 2 * 3_600_000) });

    const worker = startWorker({
      DATABASE_URL: url,
      VEETBOT_DATA_DIR: dataDir,
      VEETBOT_WORKER_DRAIN_MS: '60000',
      VEETBOT_WORKER_PORT: '0',
    });
    try {
      await until(() => worker.stdout().includes(' started: '), 60_000, 'the worker started');

      // One step, many external writes in provider order (a sequential batch): slow enough to
      // be caught in the middle, each with one observable effect.
      const calls = 120;
      const submission: StepSubmission = {
        tenantId,
        runId: run.id,
        stepNumber: 1,
        principal,
        calls: Array.from({ length: calls }, (_, i) => ({
          callId: `call-${i}`,
          toolName: 'demo.external_write',
          arguments: { line: `line ${i}` },
          contextTrust: ['user' as const],
        })),
      };
      await api.stores.steps.insert(tenantId, { runId: run.id, stepNumber: 1, batch: toStoredBatch(submission), createdAt: new Date() });
      await api.queue.notify({ tenantId, runId: run.id, stepNumber: 1 });

      await until(async () => (await outboxLines()).length > 0, 30_000, 'the first effect');
      worker.child.kill('SIGTERM');
      const atSignal = (await outboxLines()).length;
      expect(atSignal).toBeLessThan(calls);

      expect(await worker.exited).toEqual({ code: 0, signal: null });
      // Drained: every call of the batch ran, once.
      const lines = await outboxLines();
      expect(lines).toHaveLength(calls);
      expect(new Set(lines).size).toBe(calls);
      expect((await api.stores.steps.get(tenantId, run.id, 1))?.status).toBe('completed');
      const rows = await api.stores.invocations.listForRun(tenantId, run.id);
      expect(rows).toHaveLength(calls);
      expect(rows.every((r) => r.status === 'succeeded' && r.attemptNumber === 1)).toBe(true);
      // The lease went back: the next worker need not wait for it to expire.
      const after = await api.stores.runs.get(tenantId, run.id);
      expect(after?.leaseOwner).toBeNull();
      expect(after?.fencingToken).toBeGreaterThan(0);
      expect(worker.stdout()).toContain('veetbot stopping (SIGTERM): draining 1 batch(es) for up to 60000 ms');
      expect(worker.stdout()).toContain('drained; leases released; exiting');
      expect(worker.stderr()).toBe('');
    } finally {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    }
  });
});
