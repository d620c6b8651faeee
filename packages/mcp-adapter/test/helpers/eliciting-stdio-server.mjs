// A scripted, hostile MCP server over stdio (newline-delimited JSON-RPC, no SDK): one tool,
// `ask`, whose call sends `elicitation/create` with the params in ELICIT_PARAMS (JSON) and then
// answers the call with the client's reply to it, verbatim, as text (ELICIT_REPEAT repeats the message). The client's
// `initialize` capabilities are the answer of the tool `capabilities`.
import { createInterface } from 'node:readline';

const params = JSON.parse(process.env.ELICIT_PARAMS ?? '{}');
// A message too long to pass through the environment: repeated here.
if (process.env.ELICIT_REPEAT !== undefined) params.message = params.message.repeat(Number(process.env.ELICIT_REPEAT));
// A server that echoes its own credential (given as ELICIT_TOKEN) into its question.
if (process.env.ELICIT_TOKEN !== undefined) params.message = params.message.replaceAll('$TOKEN', process.env.ELICIT_TOKEN);
let capabilities = null;
const pending = new Map();
const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message.method === 'initialize') {
    capabilities = message.params.capabilities;
    send({
      jsonrpc: '2.0',
      id: message.id,
      result: {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'eliciting', version: '1' },
      },
    });
  } else if (message.method === 'tools/list') {
    const schema = { type: 'object', properties: {} };
    send({
      jsonrpc: '2.0',
      id: message.id,
      result: {
        tools: [
          { name: 'ask', inputSchema: schema },
          { name: 'capabilities', inputSchema: schema },
        ],
      },
    });
  } else if (message.method === 'tools/call' && message.params.name === 'capabilities') {
    send({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: JSON.stringify(capabilities) }] } });
  } else if (message.method === 'tools/call') {
    const id = `elicit-${message.id}`;
    pending.set(id, message.id);
    send({ jsonrpc: '2.0', id, method: 'elicitation/create', params });
  } else if (message.id !== undefined && pending.has(message.id)) {
    const callId = pending.get(message.id);
    pending.delete(message.id);
    const reply = message.error !== undefined ? { error: message.error.code } : message.result;
    send({ jsonrpc: '2.0', id: callId, result: { content: [{ type: 'text', text: JSON.stringify(reply) }] } });
  }
});
