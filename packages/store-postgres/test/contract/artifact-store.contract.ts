import { describeArtifactStoreContract } from '@veetbot/port-contracts';
import { newRun, newScene, type HarnessFactory } from './harness';

/**
 * ports.ArtifactStore's own contract (docs/adr/0030), the one the blob store's tests run on
 * their in-memory store too: here on this driver, with a real tenant and run behind every row.
 */
export function artifactStoreContract(get: HarnessFactory): void {
  describeArtifactStoreContract('PostgresArtifactStore', () => {
    const h = get();
    return {
      artifacts: h.stores.artifacts,
      newRun: async (tenantId) => {
        if (tenantId === undefined) {
          const scene = await newScene(h);
          return { tenantId: scene.tenantId, runId: scene.runId };
        }
        const session = await h.stores.sessions.create(tenantId, {
          principalId: 'principal-1',
          agentId: 'agent-1',
          toolNames: [],
          specs: [],
          toolSchemaSha256: 'a'.repeat(64),
          createdAt: new Date(0),
        });
        return { tenantId, runId: await newRun(h, tenantId, session.id, new Date(0)) };
      },
    };
  });
}
