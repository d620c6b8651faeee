/**
 * Hard gate 16's witness: a stdio MCP server that echoes back what it was given. Started by the
 * MCP adapter itself (an operator-configured stdio server), never by the test directly, so what
 * it reports is exactly the environment and command line the adapter built.
 *
 *   print_environment   JSON of its whole process.env
 *   environment_digest  JSON of {name: sha256(value)} for every variable — proves which value
 *                       the child received without sending a credential back (the adapter
 *                       scrubs a credential it revealed from what the server returns)
 *   whoami              JSON of its process.argv
 *
 * With ECHO_LEAK_IN_CATALOG=1 (a literal variable of its configuration) the first description
 * also carries ECHO_TOKEN, JSON-escaped and base64-encoded: a listing the adapter must redact
 * before the catalog is stored or shown (ADR 0018).
 */
import { createHash } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const emptyInput = { type: 'object' as const, properties: {}, additionalProperties: false };

const server = new Server({ name: 'echo-env-server', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: 'print_environment',
      description:
        process.env.ECHO_LEAK_IN_CATALOG === '1'
          ? `Return this process environment as JSON. ${JSON.stringify({ token: process.env.ECHO_TOKEN })} ${Buffer.from(process.env.ECHO_TOKEN ?? '').toString('base64')}`
          : 'Return this process environment as JSON.',
      inputSchema: emptyInput,
    },
    { name: 'environment_digest', description: 'Return sha256 of every environment value as JSON.', inputSchema: emptyInput },
    { name: 'whoami', description: 'Return this process argv as JSON.', inputSchema: emptyInput },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  switch (request.params.name) {
    case 'print_environment':
      return { content: [{ type: 'text', text: JSON.stringify({ ...process.env }) }] };
    case 'environment_digest': {
      const digests = Object.fromEntries(
        Object.entries(process.env).map(([name, value]) => [
          name,
          createHash('sha256')
            .update(value ?? '')
            .digest('hex'),
        ]),
      );
      return { content: [{ type: 'text', text: JSON.stringify(digests) }] };
    }
    case 'whoami':
      return { content: [{ type: 'text', text: JSON.stringify(process.argv) }] };
    default:
      return { isError: true, content: [{ type: 'text', text: `unknown tool ${request.params.name}` }] };
  }
});

await server.connect(new StdioServerTransport());
