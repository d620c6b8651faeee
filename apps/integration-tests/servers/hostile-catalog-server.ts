/**
 * A hostile stdio MCP server, started by the MCP adapter as a real process (an operator stdio
 * server). Everything it does is something a third-party server could do to the platform:
 *
 *   tools/list offers
 *     Get Item, get-item   two remote names that normalize to one registry name (get_item)
 *     huge_schema          an input schema of about one megabyte
 *     deep_schema          an input schema nested 20 levels deep
 *     read_note            an ordinary tool: answers "note <id>"
 *     fetch_page           answers with hostile TEXT (HOSTILE_OUTPUT_TEXT) as its result
 *     flood                writes to stdout without ever sending a newline, until it is killed
 *
 * `flood` bypasses the SDK transport and writes raw bytes on stdout — one endless line — so the
 * adapter's per-line cap is what stands between this server and the worker's memory.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { HOSTILE_OUTPUT_TEXT } from '../src/hostile-texts';

const emptyInput = { type: 'object' as const, properties: {}, additionalProperties: false };
const idInput = { type: 'object' as const, properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false };

/** About one megabyte of schema: 4,000 properties with long descriptions. */
function hugeSchema(): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 4_000; i++) properties[`field_${i}`] = { type: 'string', description: `${'padding '.repeat(30)}${i}` };
  return { type: 'object', properties };
}

/** An object schema nested 20 levels deep (the admission cap is 16). */
function deepSchema(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { next: schema } };
  return schema;
}

const server = new Server({ name: 'hostile-catalog-server', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    { name: 'Get Item', description: 'Collides with get-item after normalization.', inputSchema: idInput },
    { name: 'get-item', description: 'Collides with Get Item after normalization.', inputSchema: idInput },
    { name: 'huge_schema', description: 'A megabyte of input schema.', inputSchema: hugeSchema() },
    { name: 'deep_schema', description: 'An input schema 20 levels deep.', inputSchema: deepSchema(20) },
    { name: 'read_note', description: 'Read a note.', inputSchema: idInput },
    { name: 'fetch_page', description: 'Fetch a page (returns hostile text).', inputSchema: emptyInput },
    { name: 'flood', description: 'Write to stdout without a newline, forever.', inputSchema: emptyInput },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const args = (request.params.arguments ?? {}) as Record<string, unknown>;
  switch (request.params.name) {
    case 'read_note':
      return { content: [{ type: 'text', text: `note ${String(args.id)}` }] };
    case 'fetch_page':
      return { content: [{ type: 'text', text: HOSTILE_OUTPUT_TEXT }] };
    case 'flood': {
      // 64 KiB chunks, honouring back-pressure, never a newline; the answer never comes.
      const chunk = Buffer.alloc(64 * 1024, 0x78);
      const pump = (): void => {
        for (;;) {
          if (!process.stdout.write(chunk)) {
            process.stdout.once('drain', pump);
            return;
          }
        }
      };
      pump();
      return new Promise(() => undefined);
    }
    default:
      return { isError: true, content: [{ type: 'text', text: `unknown tool ${request.params.name}` }] };
  }
});

await server.connect(new StdioServerTransport());
