import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadOperatorConfig, OperatorConfigError, type OperatorConfig } from '@veetbot/mcp-adapter';
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
 * The example operator configuration written on first start (when the file does not exist):
 * server-everything as a stdio MCP server, started as `node <its dist/index.js> stdio`. stdio
 * servers live here and only here (§ Where a server may live). Its tools are demo tools that
 * touch nothing outside the process, so the example classifies them as reads.
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
              },
            ],
    },
  };
}

/** Write the example once (never over an existing file), then load and validate the file. */
export function prepareOperatorConfig(path: string): { readonly config: OperatorConfig; readonly written: boolean } {
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
    return { config: loadOperatorConfig(path), written };
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
