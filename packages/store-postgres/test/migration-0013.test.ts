import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/database';
import { migrate, MIGRATIONS_FOLDER } from '../src/migrate';
import { createStores } from '../src/stores';

// ADR 0017: migration 0013 takes non-secret references out of the tenant rows written before it
// (an operator variable's name, a file path, or a pasted value) and disables those servers.
const folders: string[] = [];
afterAll(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

describe('migration 0013 on tenant rows written before it', () => {
  it('drops env:/file:/inline references and disables those servers; secret: rows and none rows are untouched', async () => {
    // The migrations as they were before 0013: the same files, the journal cut at 0012.
    const before = await mkdtemp(join(tmpdir(), 'veetbot-migrations-'));
    folders.push(before);
    await cp(MIGRATIONS_FOLDER, before, { recursive: true });
    const journalPath = join(before, 'meta', '_journal.json');
    const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: { tag: string }[] };
    journal.entries = journal.entries.filter((e) => e.tag < '0013');
    await writeFile(journalPath, JSON.stringify(journal));

    const database = await openDatabase({ dataDir: 'memory://' });
    try {
      await migrate(database, { migrationsFolder: before });
      const stores = createStores(database);
      const at = new Date(Date.UTC(2030, 0, 1));
      await stores.tenants.create({ id: 'old', name: 'old', createdAt: at });
      const row = (serverId: string, authScheme: 'bearer' | 'none', credentialRef: string | null) =>
        stores.mcpServers.create('old', {
          serverId,
          transport: 'http',
          endpoint: 'https://mcp.example.com/mcp',
          authScheme,
          authName: null,
          credentialRef,
          tokenEndpoint: null,
          tokenScopes: null,
          sideEffect: 'external_read',
          risk: 'low',
          idempotency: 'read_only',
          requiredScopes: [],
          timeoutSeconds: 30,
          maximumOutputBytes: 1024,
          createdAt: at,
        });
      await row('env_ref', 'bearer', 'env:DATABASE_URL');
      await row('file_ref', 'bearer', 'file:/etc/shadow');
      await row('inline', 'bearer', 'vbk_inline_secret_value_123456');
      await row('odd_secret', 'bearer', 'secret:1bad');
      await row('good', 'bearer', 'secret:ACME_TOKEN');
      await row('open', 'none', null);

      await migrate(database);
      const after = Object.fromEntries((await stores.mcpServers.list('old')).map((s) => [s.serverId, [s.credentialRef, s.enabled]]));
      expect(after).toEqual({
        env_ref: [null, false],
        file_ref: [null, false],
        inline: [null, false],
        odd_secret: [null, false],
        good: ['secret:ACME_TOKEN', true],
        open: [null, true],
      });
    } finally {
      await database.close();
    }
    // Two full migration runs on PGlite in the test body: as long as pglite-data-dir's restart.
  }, 120_000);
});
