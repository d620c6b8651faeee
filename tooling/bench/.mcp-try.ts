import { benchMcpCall } from './src/mcp-call.bench';
import { benchMcpSessionOpen } from './src/mcp-session-open.bench';
const context = { postgres: { reachable: false as const, server: 'x', reason: 'try' } };
const which = process.argv[2];
const lines = which === 'open' ? await benchMcpSessionOpen(context) : await benchMcpCall(context);
for (const l of lines) console.log(l);
