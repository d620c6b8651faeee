import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startWorker } from './worker-process-harness';

/**
 * The real worker process (`node --import tsx apps/worker/src/main.ts`), driven only through
 * its database and its signals: SIGTERM while a slow batch runs lets the batch finish and
 * exits 0 with the run's lease released (worker-process.postgres.test.ts, PostgreSQL only); an
 * unreachable database is one line on stderr with a stable code and exit 1.
 */
describe('worker start-up errors', () => {
  it('an unreachable database: one line with startup.database_unreachable on stderr, exit 1', async () => {
    // A data folder of its own: the worker writes the example operator file before it reaches the database.
    const dataDir = await mkdtemp(join(tmpdir(), 'veetbot-unreachable-'));
    const worker = startWorker({
      DATABASE_URL: 'postgres://veetbot:hunter2@127.0.0.1:1/veetbot',
      VEETBOT_STARTUP_TIMEOUT_MS: '20000',
      VEETBOT_WORKER_PORT: '0',
      VEETBOT_DATA_DIR: dataDir,
    });
    const exited = await worker.exited;
    expect(exited).toEqual({ code: 1, signal: null });
    const lines = worker.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^error startup\.database_unreachable: PostgreSQL at postgres:\/\/veetbot:\*\*\*@127\.0\.0\.1:1\/veetbot could not be reached\.$/,
    );
    // The password never reaches the log.
    expect(worker.stderr() + worker.stdout()).not.toContain('hunter2');
    await rm(dataDir, { recursive: true, force: true });
  });

  it('no DATABASE_URL: a separate worker cannot run on the embedded PGlite, exit 1', async () => {
    const worker = startWorker({});
    expect(await worker.exited).toEqual({ code: 1, signal: null });
    expect(worker.stderr()).toMatch(/^error startup\.database_url_required: DATABASE_URL is not set\./);
  });

  it('a bad setting is refused by name before anything starts', async () => {
    const worker = startWorker({ DATABASE_URL: 'postgres://127.0.0.1:1/x', VEETBOT_WORKER_CONCURRENCY: 'many' });
    expect(await worker.exited).toEqual({ code: 1, signal: null });
    expect(worker.stderr()).toMatch(/^error startup\.config_invalid: VEETBOT_WORKER_CONCURRENCY must be an integer/);
  });
});
