import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

/**
 * The MCP SDK's own 2.x client over Streamable HTTP, as any MCP client would reach the gateway
 * face (docs/adr/0044). Test tooling only: the tests of the api, the integration tests and the
 * gateway import it through dev.workspace; nothing shipped does.
 *
 * `era`: 'modern' pins the stateless 2026-07-28 revision (no initialize, every request names
 * its run in a header); 'legacy' runs the 2025 initialize handshake (2025-11-25 unless the
 * server answers an older one) and keeps the Mcp-Session-Id it is given; 'auto' is the SDK's own
 * probe (server/discover, then 2026-07-28 or the 2025 handshake), as a stock client runs it.
 */
export interface GatewayClientOptions {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly era: 'modern' | 'legacy' | 'auto';
  readonly fetch?: (url: string | URL, init?: RequestInit) => Promise<Response>;
}

export type GatewayClient = Client;
export type GatewayTransport = StreamableHTTPClientTransport;

export async function connectGatewayClient(
  options: GatewayClientOptions,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(options.url), {
    requestInit: { headers: { ...options.headers } },
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  const client = new Client(
    { name: 'veetbot-gateway-test', version: '1.0.0' },
    options.era === 'modern'
      ? { versionNegotiation: { mode: { pin: '2026-07-28' } } }
      : options.era === 'auto'
        ? { versionNegotiation: { mode: 'auto' } }
        : {},
  );
  await client.connect(transport);
  return { client, transport };
}
