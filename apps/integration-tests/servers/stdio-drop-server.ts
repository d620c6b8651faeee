/**
 * A stdio MCP server whose process dies in the middle of a call (Hard gate 12 over stdio).
 *
 *   ping   answers "pong"
 *   crash  exits the process after the call has arrived and before any answer is written
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const emptyInput = { type: 'object' as const, properties: {}, additionalProperties: false };

const server = new Server({ name: 'stdio-drop-server', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    { name: 'ping', description: 'Answer pong.', inputSchema: emptyInput },
    { name: 'crash', description: 'Exit mid-call.', inputSchema: emptyInput },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  if (request.params.name === 'crash') {
    await new Promise((resolve) => setTimeout(resolve, 50));
    process.exit(4);
  }
  if (request.params.name === 'ping') return { content: [{ type: 'text', text: 'pong' }] };
  return { isError: true, content: [{ type: 'text', text: `unknown tool ${request.params.name}` }] };
});

await server.connect(new StdioServerTransport());
