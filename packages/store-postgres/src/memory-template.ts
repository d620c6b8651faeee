import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Database, openDatabase } from './database';
import { MIGRATIONS_FOLDER, migrate } from './migrate';

/**
 * A migrated PGlite database in memory, for tests. Creating a PGlite cluster (its initdb) costs
 * five times what loading a dump of one does (measured: 15 s against 2.7 s on a loaded 2-core
 * machine), and a test suite opens dozens. So the first open migrates a fresh cluster and leaves
 * a dump of it in `cacheDir`, named by the hash of the migrations; every later open — in this
 * process or another — loads that dump and runs `migrate` (a no-op when nothing is pending).
 * A dump that cannot be read or loaded is ignored and rebuilt: the cache can only cost time.
 */
export async function openMigratedMemoryDatabase(cacheDir: string): Promise<Database> {
  const file = join(cacheDir, `veetbot-pglite-${await migrationsHash()}.tar`);
  const template = await readFile(file).then(
    (bytes) => new Blob([bytes]),
    () => null,
  );
  if (template !== null) {
    const loaded = await openDatabase({ dataDir: 'memory://', loadDataDir: template }).catch(() => null);
    if (loaded !== null) {
      try {
        await migrate(loaded);
        return loaded;
      } catch {
        await loaded.close().catch(() => undefined);
      }
    }
    // A torn or foreign dump: rebuilt below.
  }
  const database = await openDatabase({ dataDir: 'memory://' });
  await migrate(database);
  if (database.native.driver === 'pglite') {
    const dump = await database.exclusive(async () =>
      database.native.driver === 'pglite' ? database.native.client.dumpDataDir('none') : null,
    );
    if (dump !== null) {
      await mkdir(cacheDir, { recursive: true });
      // Written aside and renamed: a concurrent reader sees the whole dump or none.
      const partial = `${file}.${process.pid}.${Date.now()}.partial`;
      await writeFile(partial, new Uint8Array(await dump.arrayBuffer()));
      await rename(partial, file);
    }
  }
  return database;
}

async function migrationsHash(): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (folder: string): Promise<void> => {
    for (const entry of (await readdir(folder, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) await walk(path);
      else
        hash
          .update(entry.name)
          .update('\0')
          .update(await readFile(path))
          .update('\0');
    }
  };
  await walk(MIGRATIONS_FOLDER);
  return hash.digest('hex').slice(0, 16);
}
