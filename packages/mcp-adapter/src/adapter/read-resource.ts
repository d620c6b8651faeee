import { canonicalJson, mcpToolName, sha256Hex, type ContentPart, type ToolResultInput } from '@veetbot/domain';
import type { ToolExecutionContext } from '@veetbot/ports';
import type { McpServerConfig } from '../config/server-config';
import type { McpConnection } from '../connection/mcp-connection';
import { contentToParts } from '../mapping/content';
import { READ_RESOURCE_REMOTE_NAME, serverForcedFields, type MappedTool } from '../mapping/map-catalog';

const URI_MAX_LENGTH = 2048;

/**
 * § What MCP resources and prompts become: one synthetic tool per server with a resources
 * capability. EXTERNAL_READ, READ_ONLY, EXTERNAL_UNTRUSTED output; the operator's scopes,
 * timeout and output limit. Its version is the hash of its own declaration.
 */
export function readResourceSpec(config: McpServerConfig): MappedTool['spec'] {
  const spec = {
    name: mcpToolName(config.serverId, READ_RESOURCE_REMOTE_NAME),
    version: '',
    description: `Read one resource that the MCP server "${config.serverId}" advertises, by its URI. An empty uri lists the advertised resources.`,
    input_schema: {
      type: 'object',
      properties: {
        uri: { type: 'string', maxLength: URI_MAX_LENGTH, description: 'A URI from the server’s resource list, or "" for the list.' },
      },
      required: ['uri'],
      additionalProperties: false,
    },
    output_schema: null,
    side_effect: 'external_read',
    risk: 'low',
    idempotency: 'read_only',
    ...serverForcedFields(config),
    model_visible: true,
  } satisfies MappedTool['spec'];
  return { ...spec, version: sha256Hex(canonicalJson(spec)) };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The synthetic tool's execute: an empty uri returns resources/list; any other uri must be one
 * the server advertises right now (never a URI the model made up), then resources/read. Text
 * contents come back as text; binary contents are described, not carried.
 */
export async function readResourceTool(
  connection: McpConnection,
  args: Record<string, unknown>,
  timeoutMs: number,
  ctx: ToolExecutionContext,
  ceilingBytes?: number,
): Promise<ToolResultInput> {
  const uri = typeof args.uri === 'string' ? args.uri : '';
  const deadlineAt = ctx.deadlineAt.getTime();
  const listed = (await connection.listResources(ctx.cancellation, deadlineAt)).filter(
    (r): r is Record<string, unknown> & { uri: string } => isObject(r) && typeof r.uri === 'string',
  );
  if (uri === '') {
    const list = listed.map((r) => ({
      uri: r.uri,
      ...(typeof r.name === 'string' ? { name: r.name } : {}),
      ...(typeof r.mimeType === 'string' ? { mimeType: r.mimeType } : {}),
      ...(typeof r.description === 'string' ? { description: r.description } : {}),
    }));
    return connection.scrubber.redact({
      ok: true,
      content: [{ type: 'text', text: JSON.stringify(list) }],
      structured: { resources: list },
      output_trust: 'external_untrusted',
    });
  }
  if (!listed.some((r) => r.uri === uri)) {
    return {
      ok: false,
      content: [],
      failure: {
        kind: 'not_found',
        reason_code: 'tool.not_found',
        detail: 'The URI is not in the server’s advertised resource list.',
        retryable: false,
        external_text: null,
      },
    };
  }
  const read = await connection.readResource(uri, timeoutMs, ctx.cancellation, deadlineAt, ceilingBytes);
  const parts: ContentPart[] = [];
  for (const item of read.contents) {
    if (!isObject(item)) continue;
    if (typeof item.text === 'string') parts.push({ type: 'text', text: item.text });
    else parts.push(...contentToParts([{ type: 'resource', resource: item }]));
  }
  // A resource's text contents read as one too: a secret split between two is caught (docs/adr/0053).
  return connection.scrubber.redactResult({ ok: true, content: parts, output_trust: 'external_untrusted' });
}
