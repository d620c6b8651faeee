import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Principal } from '@veetbot/domain';
import type { AgentSpec, McpElicitation, RuntimeEnvironment, Stores } from '@veetbot/ports';
import { createArtifactWriterFactory, FolderBlobStore, FolderWorkspaceProvider } from '@veetbot/blob-store-folder';
import { DefaultCredentialResolver, operatorCredentialBroker } from '@veetbot/credential-broker';
import { autoApprovingUserAgent, McpAdapter, operatorServers, type DefaultEgressPolicy, type McpServerConfig } from '@veetbot/mcp-adapter';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { WorkspaceFileService } from '@veetbot/sandbox-adapter';
import { InMemoryToolRegistry } from '@veetbot/registry';
import { Runtime } from '@veetbot/runtime';
import { createStores, migrate, openDatabase, type Database } from '@veetbot/store-postgres';
import { createBuiltinTools } from '@veetbot/tools-builtin';
import { AjvSchemaValidator } from '@veetbot/validation';
import { GLOBAL_MAXIMUM_OUTPUT_BYTES } from './compose';

/**
 * `veetbot mcp check`'s composition: the platform's own parts, put together the way a worker
 * puts them together (apps/worker/src/compose.ts), so the server is dialled EXACTLY as the
 * platform would dial it — the McpAdapter with the given egress policy and the credential
 * broker over this process's environment, discovery recorded into real stores (PGlite in
 * memory: migrations, the mcp_tool_catalog history and the event stream are the production
 * ones), the registry with the builtins, the default policy engine, and the Runtime, whose
 * openSession prepares the server and pins the session and whose submitStep runs a call
 * through the full fourteen-step pipeline. Nothing persists: the database is in memory and the
 * folders are temporary, removed by `close`.
 */
export interface McpCheckComposition {
  readonly stores: Stores;
  readonly registry: InMemoryToolRegistry;
  readonly adapter: McpAdapter;
  readonly runtime: Runtime;
  readonly tenantId: string;
  readonly principal: Principal;
  readonly agent: AgentSpec;
  readonly environment: RuntimeEnvironment;
  /** Orderly: every MCP transport closed (stdio children killed with their group), database closed, folders removed. */
  close(): Promise<void>;
}

/** `elicitation`: who answers a server's form elicitation (`--elicitation`); absent, it is not advertised. */
export async function composeMcpCheck(
  config: McpServerConfig,
  egress: DefaultEgressPolicy,
  elicitation?: McpElicitation,
  oauth?: { readonly redirectUri: string; readonly clientMetadataUrl: string | undefined },
): Promise<McpCheckComposition> {
  const root = await mkdtemp(join(tmpdir(), 'veetbot-mcp-check-'));
  const cleanup: (() => Promise<void>)[] = [() => rm(root, { recursive: true, force: true })];
  const closeAll = async () => {
    for (const step of cleanup.splice(0)) await step().catch(() => undefined);
  };
  try {
    const database: Database = await openDatabase({ dataDir: 'memory://' });
    cleanup.unshift(() => database.close());
    await migrate(database);
    const stores = createStores(database);
    const clock = { now: () => new Date() };

    const validator = new AjvSchemaValidator();
    const registry = new InMemoryToolRegistry({ validator, globalMaximumOutputBytes: GLOBAL_MAXIMUM_OUTPUT_BYTES, flags: {} });
    registry.registerBuiltins(createBuiltinTools({ outboxPath: join(root, 'outbox.log'), clock }));
    // The broker reads this process's environment at every call: `--credential-ref env:NAME`
    // names a variable of the operator's shell, as it names one of the worker's.
    const credentials = new DefaultCredentialResolver();
    const mcpCredentials = operatorCredentialBroker();
    const tenantId = 'mcp-check';
    const adapter = new McpAdapter({
      servers: { list: async (id) => (id === tenantId ? operatorServers([config]) : []) },
      catalog: stores.mcpCatalog,
      events: stores.events,
      skills: stores.skills,
      credentials: mcpCredentials,
      validator,
      egress,
      clock,
      ...(elicitation === undefined ? {} : { elicitation }),
      // docs/adr/0077: `--oauth-authorize auto-approve` — the check-mode user agent; tokens stay
      // in the connection (no store: nothing of a check persists).
      ...(oauth === undefined
        ? {}
        : {
            delegatedAuthorization: {
              redirectUri: oauth.redirectUri,
              ...(oauth.clientMetadataUrl === undefined ? {} : { clientMetadataUrl: oauth.clientMetadataUrl }),
              clientName: 'veetbot mcp check',
              userAgent: autoApprovingUserAgent({ egress, maxResponseBytes: 256 * 1024, timeoutMs: 15_000 }),
            },
          }),
    });
    cleanup.unshift(() => adapter.shutdown());

    // Started only if a workspace tool runs (docs/adr/0058); mcp check calls none.
    const workspaces = new WorkspaceFileService({ workspaceRoot: join(root, 'workspaces') });
    const runtime = new Runtime({
      registry,
      validator,
      policy: new DefaultPolicyEngine(),
      clock,
      stores,
      artifacts: createArtifactWriterFactory({
        blobs: new FolderBlobStore({ root: join(root, 'blobs') }),
        artifacts: stores.artifacts,
        clock,
      }),
      credentials,
      owner: `mcp-check-${process.pid}`,
      workspaces: new FolderWorkspaceProvider({
        root: join(root, 'workspaces'),
        open: (folder) => workspaces.handle(folder),
      }),
      mcp: adapter,
    });

    await stores.tenants.create({ id: tenantId, name: 'veetbot mcp check', createdAt: clock.now() });
    // The local operator holds every scope a builtin asks for and every scope the server's
    // tools require: a check is about the server, not about a grant.
    const scopes = [...new Set([...registry.list().flatMap((s) => s.required_scopes), ...config.requiredScopes])].sort();
    const principal: Principal = { tenant_id: tenantId, principal_id: 'operator', scopes };
    return {
      stores,
      registry,
      adapter,
      runtime,
      tenantId,
      principal,
      agent: { agentId: 'mcp-check' },
      environment: { flags: {}, targetKinds: ['in_process', 'mcp'] },
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
