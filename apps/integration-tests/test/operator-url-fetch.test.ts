import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeSystem, prepareOperatorConfig, StartupError, type ComposedSystem } from '@veetbot/composition';
import type { Principal, ToolResultItem } from '@veetbot/domain';
import { openMigratedMemoryDatabase, type Database } from '@veetbot/store-postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TEMPLATE_CACHE } from '../src/test-database';
import { NPM_SERVER_ENTRIES } from '../src/npm-servers';

/**
 * Issue 23 item 6 (docs/adr/0052), against the real @modelcontextprotocol/server-everything over
 * stdio, composed as `pnpm start` composes it: its `gzip-file-as-resource` fetches any URL from
 * the worker's host, so an agent key could make the worker GET a loopback admin page, around
 * every tenant egress policy. A loopback "admin" server here counts the GETs that reach it.
 *
 *  - the first-start example offers only the tools that reach nothing (`tools`);
 *  - a file written by an earlier version (no `tools`) keeps working with those tools, and warns;
 *  - a tool the operator lists and classifies as URL-fetching (`url_fetching_tools`) is NETWORK_READ,
 *    never offered and refused, unless the operator opts in (`allow_url_fetching`);
 *  - a bad list stops the start with startup.config_invalid naming the field.
 */
let dir: string;
let database: Database;
let admin: Server;
let adminHits = 0;
let adminUrl: string;
let system: ComposedSystem | null = null;
const tenantId = 'url-fetch-tenant';
const principal: Principal = { tenant_id: tenantId, principal_id: 'agent', scopes: ['mcp.*'] };
const everythingEntry = NPM_SERVER_ENTRIES.everything;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'veetbot-url-fetch-'));
  database = await openMigratedMemoryDatabase(TEMPLATE_CACHE);
  admin = createServer((req, res) => {
    if (req.url === '/admin/secret') adminHits += 1;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ADMIN-ONLY: the internal admin page');
  });
  await new Promise<void>((resolve) => admin.listen(0, '127.0.0.1', resolve));
  adminUrl = `http://127.0.0.1:${(admin.address() as AddressInfo).port}/admin/secret`;
}, 120_000);

afterEach(async () => {
  await system?.close({ drainMs: 0 });
  system = null;
});

afterAll(async () => {
  await database?.close();
  await new Promise((resolve) => admin.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

/** server-everything as the earlier example wrote it, plus `extra` on the server entry. */
const everything = (extra: Record<string, unknown> = {}) => ({
  mcp: {
    servers: [
      {
        server_id: 'everything',
        transport: 'stdio',
        endpoint: process.execPath,
        args: [everythingEntry, 'stdio'],
        auth_scheme: 'none',
        side_effect: 'none',
        risk: 'low',
        idempotency: 'read_only',
        ...extra,
      },
    ],
  },
});

async function file(name: string, document: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(document));
  return path;
}

let tenantMade = false;
/** Compose the system from an operator file, open a session and a run; `call` submits one step. */
async function compose(path: string) {
  const prepared = prepareOperatorConfig(path);
  system = await composeSystem({ database, dataDir: dir, operator: prepared.config });
  if (!tenantMade) {
    await system.stores.tenants.create({ id: tenantId, name: tenantId, createdAt: new Date() });
    tenantMade = true;
  }
  const current = system;
  const opened = await current.runtime.openSessionWithReport(
    tenantId,
    principal,
    { agentId: 'a' },
    { flags: {}, targetKinds: ['in_process', 'mcp'] },
  );
  expect(opened.mcp?.servers.map((s) => [s.serverId, s.status])).toEqual([['everything', 'connected']]);
  const run = await current.runtime.createRun(tenantId, opened.session.id, { deadlineAt: new Date(Date.now() + 3_600_000) });
  let step = 0;
  return {
    prepared,
    offered: opened.session.toolNames.filter((name) => name.startsWith('mcp.everything.')).sort(),
    registered: current.registries.forTenant(tenantId).list(),
    async call(toolName: string, args: Record<string, unknown>): Promise<ToolResultItem> {
      step += 1;
      const outcome = await current.runtime.submitStep({
        tenantId,
        runId: run.id,
        stepNumber: step,
        principal,
        calls: [{ callId: `c${step}`, toolName, arguments: args, contextTrust: ['user'] }],
      });
      expect(outcome.items).toHaveLength(1);
      return outcome.items[0] as ToolResultItem;
    },
  };
}

const SAFE_OFFERED = [
  'mcp.everything.echo',
  'mcp.everything.get_annotated_message',
  'mcp.everything.get_resource_links',
  'mcp.everything.get_resource_reference',
  'mcp.everything.get_structured_content',
  'mcp.everything.get_sum',
  'mcp.everything.get_tiny_image',
  'mcp.everything.read_resource',
];
const GZIP = 'mcp.everything.gzip_file_as_resource';
const gzipArgs = () => ({ name: 'x.gz', data: adminUrl, outputType: 'resource' });

describe('operator tools: the allow-list and URL-fetching tools (docs/adr/0052)', () => {
  it('the first-start example offers only the tools that reach nothing; the SSRF gadget is not there to call', async () => {
    const scene = await compose(join(dir, 'first-start.json'));
    expect(scene.prepared.written).toBe(true);
    expect(scene.prepared.warnings).toEqual([]);
    expect(scene.offered).toEqual(SAFE_OFFERED);
    expect(scene.registered.map((s) => s.name)).not.toContain(GZIP);
    expect(scene.registered.map((s) => s.name)).not.toContain('mcp.everything.get_env');
    const echo = await scene.call('mcp.everything.echo', { message: 'still works' });
    expect(echo.outcome.status).toBe('succeeded');
    const gzip = await scene.call(GZIP, gzipArgs());
    expect({ status: gzip.outcome.status, reason: gzip.outcome.reason_code }).toEqual({
      status: 'denied',
      reason: 'policy.matrix.unknown_tool',
    });
    expect(adminHits).toBe(0);
  }, 120_000);

  it('a file from an earlier version (no tools list) keeps working with the safe tools, and the start warns', async () => {
    const scene = await compose(await file('legacy.json', everything()));
    expect(scene.prepared.warnings).toHaveLength(1);
    expect(scene.prepared.warnings[0]).toMatch(
      /server everything runs server-everything with no "tools" list.*gzip-file-as-resource.*not offered/,
    );
    expect(scene.prepared.config.servers[0]?.tools).toContain('echo');
    expect(scene.offered).toEqual(SAFE_OFFERED);
    expect((await scene.call(GZIP, gzipArgs())).outcome.reason_code).toBe('policy.matrix.unknown_tool');
    expect(adminHits).toBe(0);
  }, 120_000);

  it('listed and classified as URL-fetching without the opt-in: NETWORK_READ, never offered, refused — nothing fetched', async () => {
    const scene = await compose(
      await file(
        'classified.json',
        everything({ tools: ['echo', 'gzip-file-as-resource'], url_fetching_tools: ['gzip-file-as-resource'] }),
      ),
    );
    expect(scene.prepared.warnings).toEqual([]);
    expect(scene.registered.find((s) => s.name === GZIP)).toMatchObject({ side_effect: 'network_read', source: 'mcp' });
    expect(scene.registered.find((s) => s.name === 'mcp.everything.echo')).toMatchObject({ side_effect: 'none' });
    expect(scene.offered).toEqual(['mcp.everything.echo']);
    const gzip = await scene.call(GZIP, gzipArgs());
    expect({ status: gzip.outcome.status, reason: gzip.outcome.reason_code }).toEqual({
      status: 'denied',
      reason: 'policy.tool.not_enabled',
    });
    // The rule itself, as a call outside a pin (a dry run, a stale pin) meets it: the stable code.
    const spec = scene.registered.find((s) => s.name === GZIP)!;
    const decision = system!.policy.evaluate({
      tool_name: spec.name,
      tool_version: spec.version,
      kind: spec.kind,
      source: spec.source,
      server_id: spec.server_id,
      side_effect: spec.side_effect,
      risk: spec.risk,
      idempotency: spec.idempotency,
      required_scopes: [...spec.required_scopes],
      arguments_hash: 'x',
      origin_trust: 'user',
      argument_trust: {},
      principal,
    });
    expect(decision).toMatchObject({
      effect: 'deny',
      reason_code: 'policy.egress.url_fetch_refused',
      rule_id: 'operator-url-fetch-everything',
    });
    expect(adminHits).toBe(0);
  }, 120_000);

  it('with allow_url_fetching the operator opts in: offered, and the fetch really happens (the gadget the opt-in admits)', async () => {
    const scene = await compose(
      await file(
        'opted-in.json',
        everything({ tools: ['echo', 'gzip-file-as-resource'], url_fetching_tools: ['gzip-file-as-resource'], allow_url_fetching: true }),
      ),
    );
    expect(scene.offered).toEqual(['mcp.everything.echo', GZIP]);
    const gzip = await scene.call(GZIP, gzipArgs());
    expect(gzip.outcome.status).toBe('succeeded');
    expect(adminHits).toBe(1);
    adminHits = 0;
  }, 120_000);

  it('a bad list stops the start with startup.config_invalid naming the field', async () => {
    const refusal = async (name: string, extra: Record<string, unknown>) => {
      try {
        prepareOperatorConfig(await file(name, everything(extra)));
      } catch (error) {
        return error instanceof StartupError ? `${error.code}: ${error.message}` : String(error);
      }
      return 'accepted';
    };
    expect(await refusal('not-array.json', { tools: 'echo' })).toMatch(
      /^startup\.config_invalid: .*at mcp\.servers\[0\]\.tools: mcp\.config\.tools_invalid/,
    );
    expect(await refusal('empty.json', { tools: [] })).toMatch(
      /mcp\.servers\[0\]\.tools: mcp\.config\.tools_invalid: tools must name at least one/,
    );
    expect(await refusal('twice.json', { tools: ['echo', 'echo'] })).toMatch(/mcp\.servers\[0\]\.tools: mcp\.config\.tools_invalid/);
    expect(await refusal('bad-name.json', { tools: ['echo; rm -rf /'] })).toMatch(
      /mcp\.servers\[0\]\.tools\.0: mcp\.config\.tools_invalid/,
    );
    expect(await refusal('unlisted.json', { tools: ['echo'], url_fetching_tools: ['gzip-file-as-resource'] })).toMatch(
      /mcp\.servers\[0\]\.url_fetching_tools\.0: mcp\.config\.tools_invalid: url_fetching_tools names gzip-file-as-resource, which tools does not list/,
    );
    expect(await refusal('opt-in-typed.json', { allow_url_fetching: 'yes' })).toMatch(
      /mcp\.servers\[0\]\.allow_url_fetching: mcp\.config\.tools_invalid/,
    );
  });
});
