import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/**
 * The baseline of the MCP benchmarks: the MCP TypeScript SDK's own client — `Client` over
 * `StdioClientTransport` — talking to the same server process command, with nothing of ours
 * in between (no pipeline, no adapter, no database).
 */
export interface RawMcpClient {
  readonly client: Client;
  close(): Promise<void>;
}

export async function openRawClient(command: string, args: readonly string[]): Promise<RawMcpClient> {
  const transport = new StdioClientTransport({ command, args: [...args], stderr: 'ignore' });
  const client = new Client({ name: 'veetbot-bench-raw', version: '0.1.0' }, { capabilities: {} });
  await client.connect(transport);
  return {
    client,
    async close() {
      await client.close();
    },
  };
}
