// A scripted MCP server over stdio that offers many tools (default 500), for the session-open
// benchmark (issue 4, Performance: "Session open with discovery of a server with 500 tools").
//
//   node many-tools-server.mjs [--tools N] [--page-size N]
//
// Plain JavaScript with no imports beyond Node (no loader, no SDK): its start-up is node's own,
// so what the benchmark times is the client side — spawn, initialize, tools/list, mapping,
// admission, registration, recording — not a TypeScript loader in the server.
//
// Newline-delimited JSON-RPC 2.0 on stdin/stdout, as the MCP stdio transport specifies. It
// answers initialize, ping, tools/list (paginated by --page-size; default: every tool in one
// page, as SDK servers do) and tools/call (every tool echoes its `id`). Each tool has a small
// input schema of its own, declared in draft-07 like zod-to-json-schema output (so the
// platform's dialect translation runs as it does for most TypeScript servers).

const argValue = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] !== undefined ? Number(process.argv[i + 1]) : fallback;
};
const TOOL_COUNT = argValue('--tools', 500);
const PAGE_SIZE = argValue('--page-size', TOOL_COUNT);

const tools = Array.from({ length: TOOL_COUNT }, (_, i) => {
  const n = String(i).padStart(3, '0');
  return {
    name: `tool-${n}`,
    description: `Scripted tool number ${n}: looks up one record of kind ${n} by id.`,
    inputSchema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: {
        id: { type: 'string', description: `The id of the kind-${n} record.`, maxLength: 64 },
        limit: { type: 'integer', minimum: 1, maximum: 100, description: 'How many related records to include.' },
        verbose: { type: 'boolean' },
      },
      required: ['id'],
      additionalProperties: false,
    },
  };
});

function send(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function handle(message) {
  if (message === null || typeof message !== 'object' || message.id === undefined) return; // notifications
  const { id, method, params } = message;
  switch (method) {
    case 'initialize':
      return send({
        jsonrpc: '2.0',
        id,
        result: {
          protocolVersion: params?.protocolVersion ?? '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'bench-many-tools', version: '1.0.0' },
        },
      });
    case 'ping':
      return send({ jsonrpc: '2.0', id, result: {} });
    case 'tools/list': {
      const start = Number(params?.cursor ?? 0);
      const page = tools.slice(start, start + PAGE_SIZE);
      const next = start + PAGE_SIZE < tools.length ? { nextCursor: String(start + PAGE_SIZE) } : {};
      return send({ jsonrpc: '2.0', id, result: { tools: page, ...next } });
    }
    case 'tools/call': {
      const name = params?.name;
      if (!tools.some((t) => t.name === name)) return send({ jsonrpc: '2.0', id, error: { code: -32602, message: 'Unknown tool' } });
      return send({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `${name}: ${String(params?.arguments?.id ?? '')}` }] } });
    }
    default:
      return send({ jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } });
  }
}

let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
    const line = buffered.slice(0, newline).trim();
    buffered = buffered.slice(newline + 1);
    if (line === '') continue;
    try {
      handle(JSON.parse(line));
    } catch {
      // A malformed line is dropped, as a tolerant server would.
    }
  }
});
// The client closing stdin is the end of the session: with nothing else holding the event
// loop, the process exits once stdout has drained.
