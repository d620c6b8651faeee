import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadOperatorConfig, OperatorConfigError, type McpServerConfig, type OperatorConfig } from '@veetbot/mcp-adapter';
import { StartupError } from './startup-error';

/**
 * Where @modelcontextprotocol/server-everything's entry point is: this app's own dependency,
 * found through the file system (its package.json `bin`), never imported — only the MCP adapter
 * may import an `@modelcontextprotocol` package. Null when it is not installed.
 */
export function serverEverythingEntry(): string | null {
  const folder = fileURLToPath(new URL('../node_modules/@modelcontextprotocol/server-everything', import.meta.url));
  try {
    const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { bin?: string | Record<string, string> };
    const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
    if (bin === undefined) return null;
    const entry = realpathSync(join(folder, bin));
    return existsSync(entry) ? entry : null;
  } catch {
    return null;
  }
}

/**
 * The tools of server-everything (2026.8.31) that reach nothing outside its own process: no
 * network, no file beyond its own package, no environment (docs/adr/0052). Left out:
 * `gzip-file-as-resource` (fetches any http(s) URL its caller names, from this host: loopback
 * admin pages and the internal network included), `get-env` (its whole environment), the
 * `toggle-*` and `trigger-*` tools (timers, notifications and requests back to the client), and
 * the tools it registers only for clients that declare sampling, elicitation or roots.
 * `read_resource` is the synthetic resource tool: its resources are in memory or its own docs.
 */
export const SERVER_EVERYTHING_SAFE_TOOLS: readonly string[] = [
  'echo',
  'get-sum',
  'get-annotated-message',
  'get-structured-content',
  'get-tiny-image',
  'get-resource-links',
  'get-resource-reference',
  'read_resource',
];

/** A stdio server whose command line runs @modelcontextprotocol/server-everything. */
function runsServerEverything(server: McpServerConfig): boolean {
  return server.transport === 'stdio' && [server.endpoint, ...(server.args ?? [])].some((part) => part.includes('server-everything'));
}

/**
 * The example operator configuration written on first start (when the file does not exist):
 * server-everything as a stdio MCP server, started as `node <its dist/index.js> stdio`. stdio
 * servers live here and only here (§ Where a server may live). Only its tools that reach
 * nothing are offered (`tools`, docs/adr/0052), so the example classifies them as reads.
 */
export function exampleOperatorConfig(nodePath: string, entry: string | null): Record<string, unknown> {
  return {
    mcp: {
      // The egress policy of the operator's HTTP servers (the switches of `veetbot mcp check`);
      // tenant servers keep the strict default unless `tenant_egress` says otherwise (ADR 0022).
      egress: { allow_hosts: [], allow_http: false, allow_private_addresses: false },
      servers:
        entry === null
          ? []
          : [
              {
                server_id: 'everything',
                transport: 'stdio',
                endpoint: nodePath,
                args: [entry, 'stdio'],
                auth_scheme: 'none',
                side_effect: 'none',
                risk: 'low',
                idempotency: 'read_only',
                timeout_seconds: 30,
                maximum_output_bytes: 1048576,
                tools: [...SERVER_EVERYTHING_SAFE_TOOLS],
              },
            ],
    },
  };
}

/** The loaded operator configuration, whether this start wrote the example, and what to warn about. */
export interface PreparedOperatorConfig {
  readonly config: OperatorConfig;
  readonly written: boolean;
  /** One line each, printed at start (docs/adr/0052): servers offering tools nobody chose. */
  readonly warnings: readonly string[];
}

/**
 * docs/adr/0052, a file written before `tools` existed. A server-everything entry without a
 * list (the earlier example) keeps working with the tools that reach nothing — the URL-fetching
 * `gzip-file-as-resource` is no longer offered — and says so; any other server without a list
 * keeps offering everything it lists, and the start says that too.
 */
export function applyToolAllowLists(config: OperatorConfig): { readonly config: OperatorConfig; readonly warnings: string[] } {
  const warnings: string[] = [];
  const servers = config.servers.map((server) => {
    if (server.tools !== undefined) return server;
    if (runsServerEverything(server)) {
      warnings.push(
        `operator.json: server ${server.serverId} runs server-everything with no "tools" list (a file from an earlier version): offering only its tools that reach nothing (${SERVER_EVERYTHING_SAFE_TOOLS.join(', ')}); gzip-file-as-resource, which fetches any URL from this host, is not offered. Add "tools" to choose (docs/adr/0052).`,
      );
      return { ...server, tools: [...SERVER_EVERYTHING_SAFE_TOOLS] };
    }
    warnings.push(
      `operator.json: server ${server.serverId} has no "tools" list: every tool it lists is offered to every tenant. Name them in "tools", and the ones that fetch URLs in "url_fetching_tools" (docs/adr/0052).`,
    );
    return server;
  });
  return { config: { ...config, servers }, warnings };
}

/** Write the example once (never over an existing file), then load and validate the file. */
export function prepareOperatorConfig(path: string): PreparedOperatorConfig {
  let written = false;
  if (!existsSync(path)) {
    try {
      writeFileSync(path, `${JSON.stringify(exampleOperatorConfig(process.execPath, serverEverythingEntry()), null, 2)}\n`, {
        flag: 'wx',
        mode: 0o600,
      });
      written = true;
    } catch (cause) {
      // Another role of the same deployment wrote it first (api and worker starting together).
      if ((cause as NodeJS.ErrnoException).code === 'EEXIST') return prepareOperatorConfig(path);
      throw new StartupError(
        'startup.config_invalid',
        `${path}: cannot write the example operator configuration in ${dirname(path)} (${(cause as NodeJS.ErrnoException).code ?? 'error'})`,
        { cause },
      );
    }
  }
  try {
    return { ...applyToolAllowLists(loadOperatorConfig(path)), written };
  } catch (error) {
    if (error instanceof OperatorConfigError) {
      const first = error.errors[0];
      const more = error.errors.length > 1 ? ` (and ${error.errors.length - 1} more)` : '';
      throw new StartupError(
        'startup.config_invalid',
        `${path} at ${first?.path || '(root)'}: ${first?.code ?? 'mcp.config.invalid'}: ${first?.message ?? 'invalid'}${more}`,
        { cause: error },
      );
    }
    throw error;
  }
}
