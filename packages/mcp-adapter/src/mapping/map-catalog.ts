import { mcpToolName, type ToolSpecInput } from '@veetbot/domain';
import type { SchemaValidator } from '@veetbot/ports';
import type { McpServerConfig } from '../config/server-config';
import { cutUtf8, DESCRIPTION_MAX_BYTES } from './description';
import { scanHeaderDeclarations, X_MCP_HEADER_INVALID } from './header-declarations';
import type { RemoteCatalog, RemoteToolDeclaration } from './remote-catalog';
import { translateToDraft2020 } from './schema-translation';

/**
 * § Discovery's mapping table, the per-server and forced columns: scopes, timeout and output
 * limit from the server's configuration; allow_parallel false (v0.1), output trust forced to
 * EXTERNAL_UNTRUSTED, source mcp. Shared by every mapped tool and the synthetic read_resource.
 */
export function serverForcedFields(config: McpServerConfig) {
  return {
    required_scopes: [...config.requiredScopes],
    timeout_seconds: config.timeoutSeconds,
    maximum_output_bytes: config.maximumOutputBytes,
    allow_parallel: false,
    kind: 'capability',
    target_kind: 'mcp',
    output_trust: 'external_untrusted',
    source: 'mcp',
    server_id: config.serverId,
    device_id: null,
    deprecated: false,
  } as const satisfies Partial<ToolSpecInput>;
}

/** § Milestone 26: the one metadata key that changes presentation. */
export const APPLICATION_ONLY_META_KEY = 'veetbot/application-only';

/** § Argument validation: serialized size cap, checked before anything else looks at a schema. */
export const SCHEMA_MAX_BYTES = 32 * 1024;

/** The remote name the synthetic resource tool occupies. */
export const READ_RESOURCE_REMOTE_NAME = 'read_resource';

export interface MappedTool {
  readonly remoteName: string;
  readonly spec: ToolSpecInput & { name: string; version: string; input_schema: Record<string, unknown> };
}

export interface CatalogMapping {
  readonly catalogHash: string;
  readonly tools: readonly MappedTool[];
  /** mcp.tool.rejected: a schema failed admission (or the declaration was malformed). */
  readonly rejected: readonly { readonly remoteName: string; readonly reason: string }[];
  /** mcp.catalog.conflict: remote names that normalize to one registry name; all of them dropped. */
  readonly conflicts: readonly { readonly registryName: string; readonly remoteNames: readonly string[] }[];
}

export interface MapOptions {
  /** The server offers resources: mcp.{server_id}.read_resource is taken. */
  readonly resources: boolean;
  /**
   * The connection mirrors x-mcp-header arguments into Mcp-Param-* headers (2026-07-28 over
   * Streamable HTTP): a tool whose declarations break SEP-2243's rules is excluded (docs/adr/0064).
   */
  readonly mirrorsParamHeaders?: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * § Discovery's mapping table, where "every field is either derived or forced": the name
 * normalized under mcp.{server_id}., version = the catalog hash, the description cut to 1,024
 * bytes, the input schema admitted (a failure drops that tool only), no output schema,
 * classification, scopes, timeout and output limit from the operator's configuration,
 * allow_parallel false, output trust EXTERNAL_UNTRUSTED, source mcp. Same-server collisions
 * after normalization drop every tool involved (Decision 5).
 */
export function mapCatalog(
  config: McpServerConfig,
  catalog: RemoteCatalog,
  validator: SchemaValidator,
  options: MapOptions,
): CatalogMapping {
  const rejected: { remoteName: string; reason: string }[] = catalog.malformed.map((m) => ({ ...m }));
  const conflicts: { registryName: string; remoteNames: string[] }[] = [];

  const byName = new Map<string, RemoteToolDeclaration[]>();
  for (const tool of catalog.tools) {
    // SEP-2243: "MUST exclude" — as if the server had not listed it, so before the collision
    // check: an excluded tool conflicts with nothing (docs/adr/0064).
    if (options.mirrorsParamHeaders === true && scanHeaderDeclarations(tool.inputSchema).kind === 'invalid') {
      rejected.push({ remoteName: tool.name, reason: X_MCP_HEADER_INVALID });
      continue;
    }
    const name = mcpToolName(config.serverId, tool.name);
    const group = byName.get(name) ?? [];
    group.push(tool);
    byName.set(name, group);
  }
  const readResourceName = options.resources ? mcpToolName(config.serverId, READ_RESOURCE_REMOTE_NAME) : null;

  const tools: MappedTool[] = [];
  for (const [registryName, group] of byName) {
    if (group.length > 1 || registryName === readResourceName) {
      const remoteNames = group.map((t) => t.name);
      if (registryName === readResourceName) remoteNames.push('(synthetic read_resource)');
      conflicts.push({ registryName, remoteNames });
      continue;
    }
    const tool = group[0]!;
    const admitted = admitInputSchema(tool.inputSchema, validator);
    if (!admitted.ok) {
      rejected.push({ remoteName: tool.name, reason: admitted.reason });
      continue;
    }
    tools.push({
      remoteName: tool.name,
      spec: {
        name: registryName,
        version: catalog.catalogHash,
        description: cutUtf8(tool.description ?? '', DESCRIPTION_MAX_BYTES),
        input_schema: admitted.schema,
        output_schema: null,
        // docs/adr/0052: a tool the operator names as fetching URLs reads the network, whatever
        // the server's class; the composed policy refuses it unless the operator opted in.
        side_effect: config.urlFetchingTools?.includes(tool.name) === true ? 'network_read' : config.sideEffect,
        risk: config.risk,
        idempotency: config.idempotency,
        ...serverForcedFields(config),
        model_visible: !(isObject(tool.meta) && tool.meta[APPLICATION_ONLY_META_KEY] === true),
      },
    });
  }
  return { catalogHash: catalog.catalogHash, tools, rejected, conflicts };
}

/**
 * § Discovery: "validated as JSON Schema draft 2020-12 at discovery ... Remote $ref is
 * rejected. Schema depth is capped at 16 and total serialized size at 32 KB". The size is
 * checked first, on the schema as sent, so a megabyte schema costs one serialization and
 * nothing more; the rest is the validator's admission.
 */
export function admitInputSchema(
  schema: Record<string, unknown>,
  validator: SchemaValidator,
): { ok: true; schema: Record<string, unknown> } | { ok: false; reason: string } {
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(schema), 'utf8');
  } catch {
    return { ok: false, reason: 'schema.too_deep' };
  }
  if (size > SCHEMA_MAX_BYTES) return { ok: false, reason: 'schema.too_large' };
  const translated = translateToDraft2020(schema);
  if (!translated.ok) return { ok: false, reason: translated.code };
  const admission = validator.admit(translated.schema);
  if (!admission.ok) return { ok: false, reason: admission.code };
  if (translated.schema.type !== 'object') return { ok: false, reason: 'schema.not_object' };
  return { ok: true, schema: translated.schema };
}
