import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/database';
import { migrate } from '../src/migrate';
import { createStores } from '../src/stores';

// The embedded default (`pnpm start`): PGlite in a data folder, migrations applied on every
// start. What one process wrote survives a restart, and re-applying on restart is a no-op.
const folders: string[] = [];
afterAll(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

describe('PGlite in a data folder', () => {
  it('keeps tenants, runs and leases across a restart, with migrations applied on each start', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'veetbot-pglite-'));
    folders.push(dataDir);
    const at = new Date(Date.UTC(2030, 0, 1));

    const first = await openDatabase({ dataDir });
    await migrate(first);
    const stores = createStores(first);
    await stores.tenants.create({ id: 'demo', name: 'Demo tenant', createdAt: at });
    const session = await stores.sessions.create('demo', {
      principalId: 'p',
      agentId: 'a',
      toolNames: [],
      specs: [],
      toolSchemaSha256: '0'.repeat(64),
      createdAt: at,
    });
    const run = await stores.runs.create('demo', { sessionId: session.id, deadlineAt: at, budgets: {}, createdAt: at });
    const lease = await stores.runs.acquireLease('demo', run.id, 'worker-1', 60_000, at);
    await first.close();

    const second = await openDatabase({ dataDir });
    try {
      await migrate(second);
      const reopened = createStores(second);
      expect(await reopened.tenants.get('demo')).toMatchObject({ id: 'demo', name: 'Demo tenant' });
      const stored = await reopened.runs.get('demo', run.id);
      expect(stored).toMatchObject({ leaseOwner: 'worker-1', fencingToken: lease?.fencingToken });
      // The fencing token keeps increasing across the restart.
      const next = await reopened.runs.acquireLease('demo', run.id, 'worker-2', 60_000, new Date(at.getTime() + 120_000));
      expect(next?.fencingToken).toBe((lease?.fencingToken ?? 0) + 1);
    } finally {
      await second.close();
    }
  }, 120_000);
});
