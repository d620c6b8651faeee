import { randomUUID } from 'node:crypto';
import { describeArtifactStoreContract } from '@veetbot/port-contracts';
import { MemoryArtifactStore } from './memory-artifact-store';

// docs/adr/0030: the in-memory ArtifactStore these tests compose the writer and the read with
// runs the same contract as the real store (store-postgres, on PostgreSQL and PGlite), so it
// cannot drift from it. The real one is out of reach here: the database drivers belong to
// store-postgres alone (tooling/boundaries/table.cjs).
describeArtifactStoreContract('MemoryArtifactStore (blob-store-folder tests)', () => ({
  artifacts: new MemoryArtifactStore(),
  newRun: async (tenantId) => ({ tenantId: tenantId ?? `tenant-${randomUUID()}`, runId: randomUUID() }),
}));
