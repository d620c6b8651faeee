import { afterAll, beforeAll } from 'vitest';
import { openDatabase } from '../src/database';
import { migrate } from '../src/migrate';
import { createStores } from '../src/stores';
import { type StoreHarness, storeContract } from './contract';

// The embedded driver (`pnpm start`): PGlite, in memory for the test. Always runs.
let harness: StoreHarness | undefined;

beforeAll(async () => {
  const database = await openDatabase({ dataDir: 'memory://' });
  await migrate(database);
  harness = { database, stores: createStores(database) };
}, 120_000);

afterAll(async () => {
  await harness?.database.close();
});

storeContract(() => {
  if (!harness) throw new Error('PGlite harness not ready');
  return harness;
});
