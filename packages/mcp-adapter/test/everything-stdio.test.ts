import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DynamicTool, RegistrationReport } from '@veetbot/ports';
import { AjvSchemaValidator } from '@veetbot/validation';
import {
  DefaultEgressPolicy,
  liveProcessGroups,
  McpAdapter,
  operatorServers,
  validateServerConfig,
  type McpServerConfig,
} from '../src/index';
import { alive, EVERYTHING_ENTRY } from './helpers/everything';
import { context, MemoryCatalog, MemoryEvents, MemorySkills, MutableCredentials } from './helpers/fakes';

const SENTINEL = `veetbot-sentinel-${process.pid}`;
const TOKEN = 'token-for-everything-1234';

function everythingConfig(): McpServerConfig {
  const verdict = validateServerConfig(
    {
      serverId: 'everything',
      transport: 'stdio',
      endpoint: process.execPath,
      args: [EVERYTHING_ENTRY, 'stdio'],
      authScheme: 'env',
      authName: 'EVERYTHING_TOKEN',
      credentialRef: 'env:EVERYTHING_TOKEN',
      sideEffect: 'external_read',
      risk: 'low',
      idempotency: 'read_only',
      requiredScopes: ['mcp.everything.use'],
    },
    { source: 'operator', egress: new DefaultEgressPolicy() },
  );
  if (!verdict.ok) throw new Error(JSON.stringify(verdict.errors));
  return verdict.config;
}

describe('the real @modelcontextprotocol/server-everything over stdio', () => {
  const events = new MemoryEvents();
  const catalog = new MemoryCatalog(events);
  const skills = new MemorySkills();
  const credentials = new MutableCredentials({ 'env:EVERYTHING_TOKEN': TOKEN });
  const config = everythingConfig();
  const adapter = new McpAdapter({
    servers: { list: async () => operatorServers([config]) },
    catalog,
    events,
    skills,
    credentials,
    validator: new AjvSchemaValidator(),
    egress: new DefaultEgressPolicy(),
    clock: { now: () => new Date() },
  });
  const registered: DynamicTool[] = [];
  const register = async (tools: readonly DynamicTool[]): Promise<RegistrationReport> => {
    registered.push(...tools);
    return { source: 'mcp', registered: tools.map((t) => t.spec.name), rejected: [] };
  };
  const tool = (name: string) => {
    const found = registered.find((t) => t.spec.name === name);
    if (!found) throw new Error(`${name} not registered: ${registered.map((t) => t.spec.name).join(', ')}`);
    return found;
  };
  let prepared: Awaited<ReturnType<McpAdapter['prepareSession']>>;

  beforeAll(async () => {
    process.env.VEETBOT_SENTINEL_FOR_GATE_16 = SENTINEL;
    prepared = await adapter.prepareSession(
      { tenantId: 'tenant-a', sessionId: 's1', principal: { tenant_id: 'tenant-a', principal_id: 'p', scopes: [] } },
      register,
    );
  }, 30_000);

  afterAll(async () => {
    delete process.env.VEETBOT_SENTINEL_FOR_GATE_16;
    await adapter.shutdown();
  });

  it('connects, discovers and registers the tools under mcp.everything.* with normalized names', () => {
    // A 2025-era server: the 2.x client speaks its revision (ADR 0044, "The client adapter moved").
    expect(prepared.servers).toEqual([
      expect.objectContaining({ serverId: 'everything', status: 'connected', reasonCode: null, protocolVersion: '2025-11-25' }),
    ]);
    const names = registered.map((t) => t.spec.name);
    expect(names).toEqual(
      expect.arrayContaining(['mcp.everything.echo', 'mcp.everything.get_env', 'mcp.everything.get_sum', 'mcp.everything.read_resource']),
    );
    expect(names.every((n) => /^mcp\.everything\.[a-z0-9_]+$/.test(n))).toBe(true);
    const echo = tool('mcp.everything.echo').spec;
    // The operator's classification, never the server's annotations; the catalog hash as version.
    expect(echo).toMatchObject({
      side_effect: 'external_read',
      risk: 'low',
      idempotency: 'read_only',
      required_scopes: ['mcp.everything.use'],
      output_schema: null,
      allow_parallel: false,
      output_trust: 'external_untrusted',
      source: 'mcp',
      server_id: 'everything',
      target_kind: 'mcp',
      version: prepared.servers[0]!.catalogHash,
    });
    // draft-07 translated to 2020-12 so it can be admitted.
    expect(echo.input_schema).toEqual({
      type: 'object',
      properties: { message: { type: 'string', description: 'Message to echo' } },
      required: ['message'],
    });
  });

  it('records the catalog generation and a connected event in order', () => {
    const hash = prepared.servers[0]!.catalogHash!;
    expect(catalog.rows.filter((r) => r.catalogHash === hash).map((r) => r.registryName)).toContain('mcp.everything.echo');
    const connected = events.ofType('mcp.server.connected');
    expect(connected).toHaveLength(1);
    expect(connected[0]!.payload).toMatchObject({ server: 'everything', transport: 'stdio' });
    expect(connected[0]!.runId).toBeNull();
  });

  it('calls echo and returns its text as external_untrusted content', async () => {
    const result = await tool('mcp.everything.echo').execute({ message: 'hello from veetbot' }, context({ sessionId: 's1' }));
    expect(result).toMatchObject({
      ok: true,
      output_trust: 'external_untrusted',
      content: [{ type: 'text', text: 'Echo: hello from veetbot' }],
    });
  });

  it('Gate 16 at unit level: get-env returns only the built environment, no sentinel, credential redacted', async () => {
    const result = await tool('mcp.everything.get_env').execute({}, context({ sessionId: 's1' }));
    expect(result.ok).toBe(true);
    const text = result.content!.map((p) => (p.type === 'text' ? p.text : '')).join('');
    expect(text).not.toContain(SENTINEL);
    expect(text).not.toContain(TOKEN);
    const env = JSON.parse(text) as Record<string, string>;
    expect(Object.keys(env).sort()).toEqual(['EVERYTHING_TOKEN', 'HOME', 'LANG', 'PATH', 'TZ']);
    expect(env.EVERYTHING_TOKEN).toBe('[redacted credential]');
    expect(env.LANG).toBe('C.UTF-8');
    expect(env.HOME).not.toBe(process.env.HOME);
  });

  it('maps a bad-arguments isError result to upstream_error with the text as data only', async () => {
    const result = await tool('mcp.everything.get_sum').execute({ a: 'x' }, context({ sessionId: 's1' }));
    expect(result.ok).toBe(false);
    expect(result.failure).toMatchObject({ kind: 'upstream_error', reason_code: 'tool.upstream_error' });
    expect(result.failure!.external_text).toContain('Input validation error');
    expect(result.failure!.detail).not.toContain('Input validation');
  });

  it('reads resources only through the advertised list', async () => {
    const read = tool('mcp.everything.read_resource');
    const listed = await read.execute({ uri: '' }, context({ sessionId: 's1' }));
    const list = JSON.parse((listed.content![0] as { text: string }).text) as { uri: string }[];
    expect(list.length).toBeGreaterThan(0);
    const first = await read.execute({ uri: list[0]!.uri }, context({ sessionId: 's1' }));
    expect(first.ok).toBe(true);
    const unknown = await read.execute({ uri: 'file:///etc/passwd' }, context({ sessionId: 's1' }));
    expect(unknown).toMatchObject({ ok: false, failure: { reason_code: 'tool.not_found' } });
  });

  it('records its prompts as untrusted mcp skills', () => {
    expect(skills.rows.length).toBeGreaterThan(0);
    expect(skills.rows.every((s) => s.source === 'mcp' && s.trust === 'external_untrusted' && s.name.startsWith('mcp.everything.'))).toBe(
      true,
    );
  });

  it('pins the remembered discovery for a second session, then starts the server on first call', async () => {
    const before = registered.length;
    const second = await adapter.prepareSession(
      { tenantId: 'tenant-a', sessionId: 's2', principal: { tenant_id: 'tenant-a', principal_id: 'p', scopes: [] } },
      register,
    );
    expect(second.servers[0]).toMatchObject({ status: 'pinned', catalogHash: prepared.servers[0]!.catalogHash });
    expect(events.ofType('mcp.server.pinned')).toHaveLength(1);
    expect(registered.length - before).toBe(before);
    const result = await tool('mcp.everything.echo').execute({ message: 'again' }, context({ sessionId: 's2' }));
    expect(result).toMatchObject({ ok: true, content: [{ type: 'text', text: 'Echo: again' }] });
    expect(events.ofType('mcp.server.connected')).toHaveLength(2);
  }, 30_000);

  it('shutdown kills every child: no process group left', async () => {
    const groups = liveProcessGroups();
    expect(groups.length).toBeGreaterThan(0);
    await adapter.shutdown();
    expect(liveProcessGroups()).toEqual([]);
    for (const pid of groups) expect(alive(-pid)).toBe(false);
    await expect(tool('mcp.everything.echo').execute({ message: 'x' }, context({ sessionId: 's1' }))).rejects.toMatchObject({
      code: 'tool.server_unreachable',
    });
  });
});
