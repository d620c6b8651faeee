import { WorkspaceFileService } from '@veetbot/sandbox-adapter';
import { join } from 'node:path';
import { createArtifactWriterFactory, FolderBlobStore, FolderWorkspaceProvider } from '@veetbot/blob-store-folder';
import { DefaultCredentialResolver } from '@veetbot/credential-broker';
import { randomUUID } from 'node:crypto';
import type { Principal } from '@veetbot/domain';
import type { Clock } from '@veetbot/ports';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { InMemoryToolRegistry } from '@veetbot/registry';
import { Runtime } from '@veetbot/runtime';
import { createStores } from '@veetbot/store-postgres';
import { createBuiltinTools } from '@veetbot/tools-builtin';
import { AjvSchemaValidator } from '@veetbot/validation';

/** The pipeline composed as the worker composes it (builtins, real stores and folders under `dataDir`). */
export function composeRuntime(database: Parameters<typeof createStores>[0], dataDir: string): Runtime {
  const clock: Clock = { now: () => new Date() };
  const stores = createStores(database);
  const validator = new AjvSchemaValidator();
  const registry = new InMemoryToolRegistry({ validator, globalMaximumOutputBytes: 1024 * 1024, flags: {} });
  registry.registerBuiltins(createBuiltinTools({ outboxPath: join(dataDir, 'inprocess-outbox.log'), clock }));
  // The confined workspace helper (docs/adr/0058), as the composition builds it.
  const workspaceFiles = new WorkspaceFileService({ workspaceRoot: join(dataDir, 'workspaces') });
  return new Runtime({
    registry,
    validator,
    policy: new DefaultPolicyEngine(),
    clock,
    stores,
    artifacts: createArtifactWriterFactory({
      blobs: new FolderBlobStore({ root: join(dataDir, 'blobs') }),
      artifacts: stores.artifacts,
      clock,
    }),
    credentials: new DefaultCredentialResolver({}),
    owner: `bench-inprocess-${process.pid}`,
    workspaces: new FolderWorkspaceProvider({
      root: join(dataDir, 'workspaces'),
      open: (folder) => workspaceFiles.handle(folder),
    }),
  });
}

export interface RuntimeTenant {
  readonly tenantId: string;
  readonly principal: Principal;
  /** Ids of the runs opened, in order. */
  readonly runIds: string[];
}

/** A fresh tenant on `runtime`'s database, one in-process session for `agentId`, and `runs` runs on it (an hour's deadline). */
export async function openRuntimeTenant(
  runtime: Runtime,
  database: Parameters<typeof createStores>[0],
  options: { name: string; agentId: string; scopes: string[]; runs: number },
): Promise<RuntimeTenant> {
  const tenantId = `bench-${randomUUID()}`;
  await createStores(database).tenants.create({ id: tenantId, name: options.name, createdAt: new Date() });
  const principal: Principal = { tenant_id: tenantId, principal_id: 'bench', scopes: options.scopes };
  const session = await runtime.openSession(tenantId, principal, { agentId: options.agentId }, { flags: {}, targetKinds: ['in_process'] });
  const deadlineAt = new Date(Date.now() + 3_600_000);
  const runs = await Promise.all(Array.from({ length: options.runs }, () => runtime.createRun(tenantId, session.id, { deadlineAt })));
  return { tenantId, principal, runIds: runs.map((r) => r.id) };
}
