import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeBlobStoreContract } from '@veetbot/port-contracts';
import { afterAll } from 'vitest';
import { FolderBlobStore } from '../src/index';

// docs/adr/0030: ports.BlobStore has one implementation, this one; its contract runs here. The
// folder-specific promises (layout, modes, atomic publish, racing writers) stay in
// folder-blob-store.test.ts.
const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

describeBlobStoreContract('FolderBlobStore', async () => {
  const root = await mkdtemp(join(tmpdir(), 'blob-contract-'));
  roots.push(root);
  return new FolderBlobStore({ root });
});
