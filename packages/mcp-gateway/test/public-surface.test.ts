import { describe, expect, it } from 'vitest';
import * as surface from '../src/index';

// The names this package's entry exports at run time (docs/adr/0031): the api mounts the
// gateway and answers its own refusals in the same JSON-RPC shape; the header and `_meta`
// names are the wire contract a client (and the tests) steer it with (docs/adr/0044).
const PUBLIC_SURFACE = [
  'DEFAULT_MCP_GATEWAY_SETTINGS',
  'McpGateway',
  'jsonRpcErrorResponse',
  'AGENT_HEADER',
  'CALL_ID_META',
  'CONTEXT_TRUST_META',
  'DEADLINE_HEADER',
  'RUN_HEADER',
  'RUN_RESPONSE_HEADER',
  'SESSION_RESPONSE_HEADER',
];

describe('@veetbot/mcp-gateway public surface', () => {
  it('exports at run time exactly the names other workspace packages import', () => {
    expect(Object.keys(surface).sort()).toEqual([...PUBLIC_SURFACE].sort());
  });
});
