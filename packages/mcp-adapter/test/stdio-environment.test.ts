import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { TIER0_ENVIRONMENT_NAMES } from '@veetbot/domain';
import { DefaultEgressPolicy, loadOperatorConfig, OperatorConfigError, validateServerConfig } from '../src/index';
import { StdioServerTransport } from '../src/transport/stdio-server-transport';
import { STDIO_ENV_VALUE_MAX_BYTES } from '../src/config/stdio-environment';
import type { ConfigValidationContext } from '../src/config/validate-server-config';
import { secret } from './helpers/fakes';

/**
 * The operator-only `env` map of a stdio server: literal, non-secret variables added to the
 * BUILT child environment (config/stdio-environment.ts). Validated when written; the transport
 * adds exactly those names and still nothing from the worker (Gate 16 keeps holding).
 */

const egress = new DefaultEgressPolicy();
const operator: ConfigValidationContext = { source: 'operator', egress };
const tenant: ConfigValidationContext = { source: 'tenant', egress };
const stdio = (overrides: Record<string, unknown> = {}) => ({
  serverId: 'memory',
  transport: 'stdio',
  endpoint: '/usr/bin/node server.js',
  authScheme: 'none',
  ...overrides,
});

function errors(input: unknown, context: ConfigValidationContext = operator): { code: string; path: string }[] {
  const verdict = validateServerConfig(input, context);
  return verdict.ok ? [] : verdict.errors.map(({ code, path }) => ({ code, path }));
}

describe('McpServerConfig.env: validated when written', () => {
  it('an operator stdio server may declare literal variables; they are kept as given', () => {
    const verdict = validateServerConfig(stdio({ env: { MEMORY_FILE_PATH: '/var/lib/memory.jsonl', Feature_Flag: 'on' } }), operator);
    expect(verdict.ok).toBe(true);
    if (verdict.ok) expect(verdict.config.env).toEqual({ MEMORY_FILE_PATH: '/var/lib/memory.jsonl', Feature_Flag: 'on' });
  });

  it('no env is no field (the Gate 16 configuration is unchanged)', () => {
    const verdict = validateServerConfig(stdio(), operator);
    expect(verdict.ok && verdict.config.env).toBeUndefined();
  });

  it('every tier-0 name is refused, case-insensitively, and so are the VEETBOT_/LD_ prefixes', () => {
    for (const name of TIER0_ENVIRONMENT_NAMES) {
      expect(errors(stdio({ env: { [name]: 'x' } }))).toEqual([{ code: 'mcp.config.env_name_tier0', path: `env.${name}` }]);
    }
    expect(errors(stdio({ env: { path: '/tmp' } }))).toEqual([{ code: 'mcp.config.env_name_tier0', path: 'env.path' }]);
    expect(errors(stdio({ env: { VEETBOT_ANYTHING: 'x', LD_BIND_NOW: '1' } })).map((e) => e.code)).toEqual([
      'mcp.config.env_name_tier0',
      'mcp.config.env_name_tier0',
    ]);
  });

  it('a value over 4 KiB, a NUL, a malformed name, too many entries', () => {
    expect(errors(stdio({ env: { BIG: 'x'.repeat(STDIO_ENV_VALUE_MAX_BYTES) } }))).toEqual([]);
    expect(errors(stdio({ env: { BIG: 'x'.repeat(STDIO_ENV_VALUE_MAX_BYTES + 1) } }))).toEqual([
      { code: 'mcp.config.env_value_too_long', path: 'env.BIG' },
    ]);
    // Bytes, not characters: 1,366 three-byte characters are 4,098 bytes.
    expect(errors(stdio({ env: { WIDE: '\u20ac'.repeat(1366) } }))).toEqual([{ code: 'mcp.config.env_value_too_long', path: 'env.WIDE' }]);
    expect(errors(stdio({ env: { NUL: 'a\u0000b' } }))).toEqual([{ code: 'mcp.config.env_value_invalid', path: 'env.NUL' }]);
    for (const name of ['1ABC', 'A-B', 'A=B', '', 'A B'])
      expect(errors(stdio({ env: { [name]: 'x' } })).map((e) => e.code)).toEqual(['mcp.config.env_name_invalid']);
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`V${i}`, 'x']));
    expect(errors(stdio({ env: many }))).toEqual([{ code: 'mcp.config.env_too_many', path: 'env' }]);
    expect(errors(stdio({ env: { A: 1 } })).map((e) => e.code)).toEqual(['mcp.config.env_invalid']);
  });

  it('the credential variable has one source: env may not name auth_name', () => {
    expect(
      errors(stdio({ authScheme: 'env', authName: 'FILES_TOKEN', credentialRef: 'env:FILES_TOKEN', env: { files_token: 'literal' } })),
    ).toEqual([{ code: 'mcp.config.env_name_credential', path: 'env.files_token' }]);
  });

  it('HTTP servers have no child environment; tenants cannot reach it at all', () => {
    const http = { serverId: 'acme', transport: 'http', endpoint: 'https://mcp.example.com/mcp', authScheme: 'none', env: { A: 'b' } };
    expect(errors(http, tenant)).toEqual([{ code: 'mcp.config.env_unexpected', path: 'env' }]);
    expect(errors(stdio({ env: { A: 'b' } }), tenant).map((e) => e.code)).toEqual(['mcp.config.stdio_operator_only']);
  });

  it('the operator file carries it under the same key, with the file spelling in error paths', () => {
    const dir = mkdtempSync(join(tmpdir(), 'veetbot-env-config-'));
    const good = join(dir, 'good.json');
    writeFileSync(
      good,
      JSON.stringify({
        mcp: {
          servers: [
            {
              server_id: 'memory',
              transport: 'stdio',
              endpoint: '/usr/bin/node m.js',
              auth_scheme: 'none',
              env: { MEMORY_FILE_PATH: '/srv/m.jsonl' },
            },
          ],
        },
      }),
    );
    expect(loadOperatorConfig(good).servers[0]!.env).toEqual({ MEMORY_FILE_PATH: '/srv/m.jsonl' });
    const bad = join(dir, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({
        mcp: {
          servers: [
            {
              server_id: 'memory',
              transport: 'stdio',
              endpoint: '/usr/bin/node m.js',
              auth_scheme: 'none',
              env: { NODE_OPTIONS: '--require /tmp/x.js' },
            },
          ],
        },
      }),
    );
    try {
      loadOperatorConfig(bad);
      expect.unreachable('a tier-0 env name must refuse the file');
    } catch (error) {
      expect(error).toBeInstanceOf(OperatorConfigError);
      expect((error as OperatorConfigError).errors.map(({ code, path }) => ({ code, path }))).toEqual([
        { code: 'mcp.config.env_name_tier0', path: 'mcp.servers[0].env.NODE_OPTIONS' },
      ]);
    }
  });
});

describe('StdioServerTransport with literal variables', () => {
  const transports: StdioServerTransport[] = [];
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()));
  });

  const PRINT_ENV = `process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'env', params: { ...process.env } }) + '\\n'); process.stdin.resume();`;

  async function childEnvironment(
    options: Partial<ConstructorParameters<typeof StdioServerTransport>[0]>,
  ): Promise<Record<string, string>> {
    const transport = new StdioServerTransport({ command: process.execPath, args: ['-e', PRINT_ENV], ...options });
    transports.push(transport);
    const messages: JSONRPCMessage[] = [];
    transport.onmessage = (m) => messages.push(m);
    await transport.start();
    const end = Date.now() + 5_000;
    while (messages.length === 0) {
      if (Date.now() > end) throw new Error('the child printed nothing');
      await new Promise((r) => setTimeout(r, 10));
    }
    return (messages[0] as { params: Record<string, string> }).params;
  }

  it('the child gets the synthesized tier, the literal variables and the credential — and still nothing of the worker', async () => {
    process.env.VEETBOT_ENV_MAP_SENTINEL = 'worker-only-value';
    process.env.MEMORY_FILE_PATH = '/the/worker/own/value';
    try {
      const env = await childEnvironment({
        environment: { MEMORY_FILE_PATH: '/tmp/from-config.jsonl' },
        credential: { name: 'ACME_TOKEN', value: secret('tok') },
      });
      expect(Object.keys(env).sort()).toEqual(['ACME_TOKEN', 'HOME', 'LANG', 'MEMORY_FILE_PATH', 'PATH', 'TZ']);
      expect(env.MEMORY_FILE_PATH).toBe('/tmp/from-config.jsonl');
      expect(JSON.stringify(env)).not.toContain('worker-only-value');
    } finally {
      delete process.env.VEETBOT_ENV_MAP_SENTINEL;
      delete process.env.MEMORY_FILE_PATH;
    }
  });

  it('refuses a tier-0 or credential-shadowing name even if configuration let one through', async () => {
    const tier0 = new StdioServerTransport({ command: process.execPath, args: ['-e', ''], environment: { NODE_OPTIONS: '--inspect' } });
    await expect(tier0.start()).rejects.toMatchObject({ code: 'mcp.config.env_name_tier0' });
    const shadow = new StdioServerTransport({
      command: process.execPath,
      args: ['-e', ''],
      environment: { ACME_TOKEN: 'literal' },
      credential: { name: 'ACME_TOKEN', value: secret('tok') },
    });
    await expect(shadow.start()).rejects.toMatchObject({ code: 'mcp.config.env_name_credential' });
  });
});
