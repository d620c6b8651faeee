import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProposedAction } from '@veetbot/domain';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { McpServerConfig, type OperatorConfig } from '@veetbot/mcp-adapter';
import { prepareOperatorConfig, SERVER_EVERYTHING_SAFE_TOOLS } from '../src/operator-config';
import { URL_FETCH_REFUSED, withOperatorUrlFetchRules } from '../src/url-fetch-policy';

/** docs/adr/0052: the composed policy's URL-fetch rules, and the warnings of a file without `tools`. */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'veetbot-url-fetch-policy-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const server = (serverId: string, extra: Partial<McpServerConfig> = {}): McpServerConfig =>
  McpServerConfig.parse({ serverId, transport: 'stdio', endpoint: 'node s.js', authScheme: 'none', sideEffect: 'none', ...extra });
const operator = (...servers: McpServerConfig[]): Pick<OperatorConfig, 'servers'> => ({ servers });
const action = (toolName: string, sideEffect: ProposedAction['side_effect']): ProposedAction => ({
  tool_name: toolName,
  tool_version: 'v',
  kind: 'capability',
  source: 'mcp',
  server_id: toolName.split('.')[1] ?? null,
  side_effect: sideEffect,
  risk: 'low',
  idempotency: 'read_only',
  required_scopes: [],
  arguments_hash: 'h',
  origin_trust: 'user',
  argument_trust: {},
  principal: { tenant_id: 't', principal_id: 'p', scopes: [] },
});

describe('withOperatorUrlFetchRules', () => {
  const base = new DefaultPolicyEngine().profile;

  it('no URL-fetching tools, or an opted-in server: the profile unchanged (the same policy version)', () => {
    expect(withOperatorUrlFetchRules(base, operator(server('plain', { tools: ['echo'] })))).toBe(base);
    const optedIn = server('fetcher', { tools: ['fetch'], urlFetchingTools: ['fetch'], allowUrlFetching: true });
    expect(withOperatorUrlFetchRules(base, operator(optedIn))).toBe(base);
  });

  it("a server not opted in: its URL-fetching tools are denied first, the stable code, and never offered; its other tools and other servers' reads are not", () => {
    const profile = withOperatorUrlFetchRules(
      base,
      operator(server('everything', { tools: ['echo', 'gzip-file-as-resource'], urlFetchingTools: ['gzip-file-as-resource'] })),
    );
    expect(profile.rules[0]).toEqual({
      id: 'operator-url-fetch-everything',
      when: { tools: ['mcp.everything.gzip_file_as_resource'], side_effects: ['network_read'] },
      effect: 'deny',
      reason_code: URL_FETCH_REFUSED,
    });
    const engine = new DefaultPolicyEngine(profile);
    expect(engine.version).not.toBe(new DefaultPolicyEngine(base).version);
    expect(engine.evaluate(action('mcp.everything.gzip_file_as_resource', 'network_read'))).toMatchObject({
      effect: 'deny',
      reason_code: URL_FETCH_REFUSED,
    });
    expect(engine.evaluate(action('mcp.everything.echo', 'none')).effect).toBe('allow');
    expect(engine.evaluate(action('mcp.other.fetch', 'network_read')).effect).toBe('allow');
  });
});

describe('prepareOperatorConfig: files without a tools list', () => {
  it('warns for a server offering everything it lists, and keeps it working as it was', async () => {
    const path = join(dir, 'http.json');
    await writeFile(
      path,
      JSON.stringify({
        mcp: {
          egress: { allow_http: true, allow_private_addresses: true },
          servers: [{ server_id: 'dev', transport: 'http', endpoint: 'http://127.0.0.1:9/mcp', auth_scheme: 'none' }],
        },
      }),
    );
    const prepared = prepareOperatorConfig(path);
    expect(prepared.config.servers[0]?.tools).toBeUndefined();
    expect(prepared.warnings).toEqual([
      expect.stringMatching(/^operator\.json: server dev has no "tools" list: every tool it lists is offered/),
    ]);
  });

  it('the first-start example lists the safe tools, and no warning', () => {
    const prepared = prepareOperatorConfig(join(dir, 'fresh.json'));
    expect(prepared.written).toBe(true);
    expect(prepared.warnings).toEqual([]);
    expect(prepared.config.servers[0]?.tools).toEqual([...SERVER_EVERYTHING_SAFE_TOOLS]);
    expect(SERVER_EVERYTHING_SAFE_TOOLS).not.toContain('gzip-file-as-resource');
    expect(SERVER_EVERYTHING_SAFE_TOOLS).not.toContain('get-env');
  });
});
