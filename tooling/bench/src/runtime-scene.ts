import { join } from 'node:path';
import { createArtifactWriterFactory, FolderBlobStore, FolderWorkspaceProvider } from '@veetbot/blob-store-folder';
import { DefaultCredentialBroker } from '@veetbot/credential-broker';
import type { Clock } from '@veetbot/ports';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { ToolRegistryImpl } from '@veetbot/registry';
import { Runtime } from '@veetbot/runtime';
import { createStores } from '@veetbot/store-postgres';
import { createBuiltinTools } from '@veetbot/tools-builtin';
import { AjvSchemaValidator } from '@veetbot/validation';

/** The pipeline composed as the worker composes it (builtins, real stores and folders under `dataDir`). */
export function composeRuntime(database: Parameters<typeof createStores>[0], dataDir: string): Runtime {
  const clock: Clock = { now: () => new Date() };
  const stores = createStores(database);
  const validator = new AjvSchemaValidator();
  const registry = new ToolRegistryImpl({ validator, globalMaximumOutputBytes: 1024 * 1024, flags: {} });
  registry.registerBuiltins(createBuiltinTools({ outboxPath: join(dataDir, 'inprocess-outbox.log'), clock }));
  return new Runtime({
    registry,
    validator,
    policy: new DefaultPolicyEngine(),
    clock,
    stores,
    artifacts: createArtifactWriterFactory({ blobs: new FolderBlobStore({ root: join(dataDir, 'blobs') }), artifacts: stores.artifacts, clock }),
    credentials: new DefaultCredentialBroker({}),
    owner: `bench-inprocess-${process.pid}`,
    workspaces: new FolderWorkspaceProvider({ root: join(dataDir, 'workspaces') }),
  });
}
