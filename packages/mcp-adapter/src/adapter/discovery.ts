import { canonicalJson } from '@veetbot/domain';
import type { SchemaValidator } from '@veetbot/ports';
import { offersRemoteTool, type McpServerConfig } from '../config/server-config';
import type { McpConnection } from '../connection/mcp-connection';
import { mapCatalog, READ_RESOURCE_REMOTE_NAME, type MappedTool } from '../mapping/map-catalog';
import { readRemoteCatalog } from '../mapping/remote-catalog';
import { readResourceSpec } from './read-resource';
import type { ServerSession } from './session-state';

/** What one server's discovery returned, before mapping: what ADR-0131's memory keeps. */
export interface RawDiscovery {
  readonly tools: readonly unknown[];
  readonly resources: boolean;
  readonly prompts: readonly unknown[] | null;
  /** The connection mirrors x-mcp-header arguments (2026-07-28 over HTTP): the exclusion applies (docs/adr/0064). */
  readonly mirrorsParamHeaders: boolean;
}

/** What a registered tool's execute knows: its spec and where it goes — never a session. */
export interface ToolRoute {
  readonly kind: 'call' | 'read_resource';
  readonly serverId: string;
  readonly remoteName: string;
  readonly spec: MappedTool['spec'];
  /** The spec with its version blanked, canonical: what a reconnection compares. */
  readonly identity: string;
}

export interface MappedDiscovery {
  readonly catalogHash: string;
  /** The x-mcp-header exclusion applied: the mapping depends on the revision too (docs/adr/0064). */
  readonly mirrorsParamHeaders: boolean;
  readonly mapping: ReturnType<typeof mapCatalog>;
  readonly routes: readonly ToolRoute[];
}

function identityOf(spec: MappedTool['spec']): string {
  return canonicalJson({ ...spec, version: '' });
}

export async function discoverRaw(connection: McpConnection, withPrompts: boolean): Promise<RawDiscovery> {
  // No long-lived signal on these requests (the SDK never removes a request's abort
  // listener): shutdown closes the connection, which ends them.
  const tools = connection.capabilities.tools ? await connection.listTools() : [];
  let prompts: unknown[] | null = null;
  if (withPrompts && connection.capabilities.prompts) {
    prompts = await connection.listPrompts().catch(() => null);
  }
  return { tools, resources: connection.capabilities.resources, prompts, mirrorsParamHeaders: connection.mirrorsParamHeaders };
}

/**
 * The declarations of the tools this deployment registers: the operator's `tools` allow-list
 * applied to what the server listed (docs/adr/0052). A tool left out is never mapped, registered,
 * hashed into the catalog or offered: a server adding or changing a tool nobody may call changes
 * nothing here. A declaration without a string name is kept for mapCatalog to reject.
 */
export function offeredDeclarations(config: McpServerConfig, tools: readonly unknown[]): readonly unknown[] {
  if (config.tools === undefined) return tools;
  return tools.filter((tool) => {
    const name = typeof tool === 'object' && tool !== null ? (tool as { name?: unknown }).name : undefined;
    return typeof name === 'string' && offersRemoteTool(config, name);
  });
}

/** § Discovery: the catalog mapped to registry tools, plus the synthetic resource tool when the server has resources. */
export function mapDiscovery(config: McpServerConfig, raw: RawDiscovery, validator: SchemaValidator): MappedDiscovery {
  const catalog = readRemoteCatalog(offeredDeclarations(config, raw.tools));
  // The synthetic resource tool is on the allow-list by its own name, read_resource.
  const resources = raw.resources && offersRemoteTool(config, READ_RESOURCE_REMOTE_NAME);
  const mapping = mapCatalog(config, catalog, validator, { resources, mirrorsParamHeaders: raw.mirrorsParamHeaders });
  const routes: ToolRoute[] = mapping.tools.map((t) => ({
    kind: 'call',
    serverId: config.serverId,
    remoteName: t.remoteName,
    spec: t.spec,
    identity: identityOf(t.spec),
  }));
  if (resources) {
    const spec = readResourceSpec(config);
    routes.push({
      kind: 'read_resource',
      serverId: config.serverId,
      remoteName: READ_RESOURCE_REMOTE_NAME,
      spec,
      identity: identityOf(spec),
    });
  }
  return { catalogHash: catalog.catalogHash, mirrorsParamHeaders: raw.mirrorsParamHeaders, mapping, routes };
}

/** What the server's live connection offers now: what a call compares with its pin. */
export function setLive(server: ServerSession, mapped: MappedDiscovery): void {
  // The hash alone says "the same mapping" only where the revision cannot change it: at
  // 2026-07-28 over HTTP the x-mcp-header exclusion depends on the negotiated revision too, so a
  // call compares its own tool's mapped spec with the live one (docs/adr/0064).
  server.liveHash = mapped.mirrorsParamHeaders ? null : mapped.catalogHash;
  server.liveSpecs = new Map(mapped.routes.map((r) => [r.spec.name, r.identity]));
}
