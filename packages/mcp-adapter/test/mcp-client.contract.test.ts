import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeMcpClientContract, type McpClientSubject } from '@veetbot/port-contracts';
import { EVERYTHING_ENTRY } from './helpers/everything';
import type { McpServerConfig } from '../src/index';
import { harness, serverConfig } from './helpers/harness';
import { ScriptedHttpServer } from './helpers/scripted-http-server';

// docs/adr/0030: the one McpClientPort contract on the real adapter, over both transports: two
// scripted MCP servers on loopback (real Streamable HTTP, real SDK client) beside one that
// refuses connections, and the official server-everything over stdio beside a command that
// exits at once. The runtime's McpClientPort doubles are one-purpose spies and do not run it
// (see the ADR).

/** A loopback port nothing listens on: connecting is refused at once. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const readOnly = { sideEffect: 'external_read', risk: 'low', idempotency: 'read_only' };
const http = (serverId: string, endpoint: string) =>
  serverConfig({ serverId, transport: 'http', endpoint, authScheme: 'none', ...readOnly });
const stdio = (serverId: string, args: string[]) =>
  serverConfig({ serverId, transport: 'stdio', endpoint: process.execPath, args, authScheme: 'none', ...readOnly });

/** The adapter over `servers` (configured in this order), each marked reachable or not. */
function subject(servers: readonly (readonly [McpServerConfig, boolean])[], dispose: () => Promise<void>): McpClientSubject {
  return {
    port: harness(servers.map(([config]) => config)).adapter,
    tenantId: 'tenant-a',
    servers: servers.map(([config, reachable]) => ({ serverId: config.serverId, reachable })),
    dispose,
  };
}

describeMcpClientContract('McpAdapter over streamable HTTP', async () => {
  const shop = new ScriptedHttpServer();
  shop.tools = [{ name: 'lookup-order' }, { name: 'list-orders' }];
  const wiki = new ScriptedHttpServer();
  wiki.tools = [{ name: 'search' }];
  await shop.start();
  await wiki.start();
  const down = await closedPort();
  return subject(
    [
      [http('shop', shop.url), true],
      [http('down', `http://127.0.0.1:${down}/mcp`), false],
      [http('wiki', wiki.url), true],
    ],
    async () => {
      await Promise.all([shop.stop(), wiki.stop()]);
    },
  );
});

describeMcpClientContract('McpAdapter over stdio (server-everything) and HTTP', async () => {
  const shop = new ScriptedHttpServer();
  shop.tools = [{ name: 'lookup-order' }];
  await shop.start();
  return subject(
    [
      [stdio('everything', [EVERYTHING_ENTRY, 'stdio']), true],
      [stdio('gone', ['-e', 'process.exit(3)']), false],
      [http('shop', shop.url), true],
    ],
    () => shop.stop(),
  );
});
