import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TOOL_NAME_PATTERN, type ToolResultItem } from '@veetbot/domain';
import { liveProcessGroups } from '@veetbot/mcp-adapter';
import { drivers } from '../src/test-database';
import { textParts, unwrapEnvelope, type McpScene } from '../src/mcp-harness';
import { EverythingHttpServer, npmStdioServer, NPM_SERVER_ENTRIES } from '../src/npm-servers';
import { expectOutcome, stringsIn, useMcpSuite } from './mcp-suite';

/**
 * The proofs against real servers from npm (issue 4, "Proofs"): @modelcontextprotocol's
 * server-everything over stdio and over Streamable HTTP, server-filesystem and server-memory
 * over stdio — someone else's code, exact versions pinned in package.json, started as real
 * processes. Every call goes through the full durable pipeline (steps 1–14, recorded rows) of
 * mcp-harness.ts. Their remote names have hyphens; the registry names are the domain's
 * normalization.
 */

/** The one text of an item, taken out of its trust envelope (and asserted to be in one). */
function spanOf(item: ToolResultItem, source: string): string {
  const parts = textParts(item);
  expect(parts.length).toBeGreaterThanOrEqual(1);
  return parts
    .map((part) => {
      const framed = unwrapEnvelope(part.text);
      expect({ source: framed?.source, trust: framed?.trust, partTrust: part.trust }).toEqual({
        source,
        trust: 'external_untrusted',
        partTrust: 'external_untrusted',
      });
      return framed!.span;
    })
    .join('\n');
}

/** Orderly shutdown left no stdio server's process group alive. */
async function closeAndExpectNoChildren(scene: McpScene): Promise<void> {
  await scene.close();
  expect(liveProcessGroups()).toEqual([]);
}

describe.each(drivers())('real MCP servers from npm through the full pipeline (%s)', (driver) => {
  const suite = useMcpSuite(driver);
  const sentinelName = `VEETBOT_NPM_SENTINEL_${randomBytes(4).toString('hex').toUpperCase()}`;
  const sentinelValue = `npm-sentinel-${randomBytes(12).toString('hex')}`;
  const folders: string[] = [];
  const tempFolder = (prefix: string) => {
    const folder = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
    folders.push(folder);
    return folder;
  };

  beforeEach(() => {
    process.env[sentinelName] = sentinelValue;
  });
  afterEach(() => {
    delete process.env[sentinelName];
  });
  afterAll(() => {
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });

  describe('server-everything over stdio', () => {
    it('hyphenated names normalized; echo and get-sum succeed; arguments the schema refuses never reach it; get-env returns only the built environment', async () => {
      const scene = await suite.open({
        servers: [
          npmStdioServer('everything', NPM_SERVER_ENTRIES.everything, ['stdio'], {
            sideEffect: 'external_read',
            risk: 'low',
            idempotency: 'read_only',
          }),
        ],
      });
      const [prepared] = scene.preparation.servers;
      expect(prepared).toMatchObject({ serverId: 'everything', transport: 'stdio', status: 'connected', reasonCode: null });

      // The catalog history records remote → registry names; every hyphen became an underscore.
      const catalog = await scene.stores.mcpCatalog.latest(scene.tenantId, 'everything');
      const mapping = Object.fromEntries(catalog.map((row) => [row.remoteName, row.registryName]));
      expect(mapping).toMatchObject({
        echo: 'mcp.everything.echo',
        'get-env': 'mcp.everything.get_env',
        'get-sum': 'mcp.everything.get_sum',
        'get-tiny-image': 'mcp.everything.get_tiny_image',
        'get-structured-content': 'mcp.everything.get_structured_content',
      });
      const hyphenated = catalog.filter((row) => row.remoteName.includes('-'));
      expect(hyphenated.length).toBeGreaterThanOrEqual(5);
      for (const row of catalog) {
        expect(row.registryName).toBe(`mcp.everything.${row.remoteName.replace(/-/g, '_')}`);
        expect(row.registryName).toMatch(TOOL_NAME_PATTERN);
        expect(scene.pinned.toolNames).toContain(row.registryName);
      }
      expect(catalog.every((row) => row.catalogHash === prepared!.catalogHash)).toBe(true);

      const echo = await scene.run('mcp.everything.echo', { message: 'hello through the pipeline' });
      expectOutcome(echo.item, 'succeeded', 'tool.ok');
      expect(spanOf(echo.item, 'mcp.everything.echo')).toBe('Echo: hello through the pipeline');
      expect(echo.row).toMatchObject({ status: 'succeeded', toolName: 'mcp.everything.echo', toolVersion: prepared!.catalogHash });

      const sum = await scene.run('mcp.everything.get_sum', { a: 19, b: 23 });
      expectOutcome(sum.item, 'succeeded', 'tool.ok');
      expect(spanOf(sum.item, 'mcp.everything.get_sum')).toContain('42');

      // server-everything answers bad arguments with an isError result, not a JSON-RPC error.
      const bad = await scene.run('mcp.everything.get_sum', { a: 'nineteen', b: 23 });
      expectOutcome(bad.item, 'failed', 'tool.arguments_invalid');

      // Gate 16 against someone else's server: its environment is the built one — the
      // synthesized tier, nothing of this worker (the planted sentinel, DATABASE_URL, HOME).
      const env = await scene.run('mcp.everything.get_env', {});
      expectOutcome(env.item, 'succeeded', 'tool.ok');
      const environment = JSON.parse(spanOf(env.item, 'mcp.everything.get_env')) as Record<string, string>;
      expect(Object.keys(environment).sort()).toEqual(['HOME', 'LANG', 'PATH', 'TZ']);
      expect(environment).toMatchObject({ LANG: 'C.UTF-8', TZ: 'UTC' });
      expect(environment.HOME).not.toBe(process.env.HOME);
      expect(JSON.stringify(env.item)).not.toContain(sentinelValue);
      expect(JSON.stringify(env.item)).not.toContain(sentinelName);

      await closeAndExpectNoChildren(scene);
    });

    it('an isError result from the server itself is upstream_error, its text only enveloped data; read_resource serves only advertised URIs', async () => {
      const scene = await suite.open({
        servers: [
          npmStdioServer('everything', NPM_SERVER_ENTRIES.everything, ['stdio'], {
            sideEffect: 'external_read',
            risk: 'low',
            idempotency: 'read_only',
          }),
        ],
      });
      // A negative id passes the declared schema (a number) and is refused by the server's own
      // check: it answers with an isError result, not a JSON-RPC error.
      const refused = await scene.run('mcp.everything.get_resource_reference', { resourceType: 'Text', resourceId: -5 });
      expectOutcome(refused.item, 'failed', 'tool.upstream_error');
      expect(refused.row.effectSentAt).not.toBeNull();
      const carrying = textParts(refused.item).filter((part) => /resourceId/.test(part.text));
      expect(carrying.length).toBeGreaterThanOrEqual(1);
      for (const part of carrying)
        expect(unwrapEnvelope(part.text)).toMatchObject({ source: 'mcp.everything.get_resource_reference', trust: 'external_untrusted' });
      expect(JSON.stringify(refused.item.outcome)).not.toMatch(/resourceId/);

      const listed = await scene.run('mcp.everything.read_resource', { uri: '' });
      expectOutcome(listed.item, 'succeeded', 'tool.ok');
      const resources = JSON.parse(spanOf(listed.item, 'mcp.everything.read_resource')) as { uri: string }[];
      expect(resources.length).toBeGreaterThan(0);
      const read = await scene.run('mcp.everything.read_resource', { uri: resources[0]!.uri });
      expectOutcome(read.item, 'succeeded', 'tool.ok');
      const unknown = await scene.run('mcp.everything.read_resource', { uri: 'file:///etc/passwd' });
      expectOutcome(unknown.item, 'failed', 'tool.not_found');
      await closeAndExpectNoChildren(scene);
    });
  });

  describe('server-everything over Streamable HTTP', () => {
    let server: EverythingHttpServer;
    beforeAll(async () => {
      server = await EverythingHttpServer.start();
    }, 90_000);
    afterAll(async () => {
      await server?.stop();
    });

    it('the same normalized names over HTTP, on loopback, and calls that succeed through the pipeline', async () => {
      const scene = await suite.open({
        servers: [server.config('everything', { sideEffect: 'external_read', risk: 'low', idempotency: 'read_only' })],
      });
      expect(scene.preparation.servers).toEqual([
        expect.objectContaining({ serverId: 'everything', transport: 'http', status: 'connected', reasonCode: null }),
      ]);
      const catalog = await scene.stores.mcpCatalog.latest(scene.tenantId, 'everything');
      expect(Object.fromEntries(catalog.map((row) => [row.remoteName, row.registryName]))).toMatchObject({
        'get-env': 'mcp.everything.get_env',
        'get-sum': 'mcp.everything.get_sum',
        echo: 'mcp.everything.echo',
      });

      // A session's worth of calls over SSE responses: each one concluded and recorded.
      for (let i = 0; i < 25; i++) {
        const echo = await scene.run('mcp.everything.echo', { message: `over http ${i}` });
        expectOutcome(echo.item, 'succeeded', 'tool.ok');
        expect(spanOf(echo.item, 'mcp.everything.echo')).toBe(`Echo: over http ${i}`);
      }
      const sum = await scene.run('mcp.everything.get_sum', { a: 2, b: 3 });
      expectOutcome(sum.item, 'succeeded', 'tool.ok');
      expect(spanOf(sum.item, 'mcp.everything.get_sum')).toContain('5');
      const rows = await scene.stores.invocations.listForRun(scene.tenantId, scene.runId);
      expect(rows.filter((row) => row.status === 'succeeded')).toHaveLength(26);
      await scene.close();
    });
  });

  describe('server-filesystem over stdio', () => {
    it('keeps the directory we pass (no roots offered); writes, reads and lists through the pipeline; refuses a path outside', async () => {
      const folder = tempFolder('veetbot-fs-server-');
      writeFileSync(join(folder, 'existing.txt'), 'already here\n');
      const scene = await suite.open({
        servers: [
          npmStdioServer('files', NPM_SERVER_ENTRIES.filesystem, [folder], {
            sideEffect: 'external_write',
            risk: 'medium',
            idempotency: 'idempotent',
          }),
        ],
      });
      expect(scene.preparation.servers).toEqual([expect.objectContaining({ serverId: 'files', transport: 'stdio', status: 'connected' })]);
      const names = (await scene.stores.mcpCatalog.latest(scene.tenantId, 'files')).map((row) => row.registryName);
      expect(names).toEqual(
        expect.arrayContaining([
          'mcp.files.read_text_file',
          'mcp.files.write_file',
          'mcp.files.list_directory',
          'mcp.files.list_allowed_directories',
        ]),
      );

      // We advertise no roots, so the server's allowed directory is still exactly ours.
      const allowed = await scene.run('mcp.files.list_allowed_directories', {});
      expectOutcome(allowed.item, 'succeeded', 'tool.ok');
      expect(spanOf(allowed.item, 'mcp.files.list_allowed_directories')).toContain(folder);

      const target = join(folder, 'note.txt');
      const written = await scene.run('mcp.files.write_file', { path: target, content: 'written by veetbot through MCP' });
      expectOutcome(written.item, 'succeeded', 'tool.ok');
      expect(readFileSync(target, 'utf8')).toBe('written by veetbot through MCP');

      const read = await scene.run('mcp.files.read_text_file', { path: target });
      expectOutcome(read.item, 'succeeded', 'tool.ok');
      expect(spanOf(read.item, 'mcp.files.read_text_file')).toContain('written by veetbot through MCP');

      const listing = await scene.run('mcp.files.list_directory', { path: folder });
      expectOutcome(listing.item, 'succeeded', 'tool.ok');
      const listed = spanOf(listing.item, 'mcp.files.list_directory');
      expect(listed).toContain('note.txt');
      expect(listed).toContain('existing.txt');

      // Outside its directory the server refuses (an isError result): an ordinary failure on an
      // idempotent server, the server's words only as data.
      const outside = await scene.run('mcp.files.read_text_file', { path: '/etc/hostname' });
      expectOutcome(outside.item, 'failed', 'tool.upstream_error');
      expect(stringsIn(outside.item.outcome).join(' ')).not.toMatch(/denied|outside/i);
      await closeAndExpectNoChildren(scene);
    });
  });

  describe('server-memory over stdio', () => {
    it('MEMORY_FILE_PATH reaches the built environment through the operator env map; entities are created and read back', async () => {
      const folder = tempFolder('veetbot-memory-server-');
      const memoryFile = join(folder, 'memory.jsonl');
      const packageDefault = join(dirname(NPM_SERVER_ENTRIES.memory), 'memory.jsonl');
      const defaultExisted = existsSync(packageDefault);
      const scene = await suite.open({
        servers: [
          npmStdioServer('memory', NPM_SERVER_ENTRIES.memory, [], {
            sideEffect: 'external_write',
            risk: 'medium',
            idempotency: 'non_idempotent',
            env: { MEMORY_FILE_PATH: memoryFile },
          }),
        ],
      });
      expect(scene.preparation.servers).toEqual([expect.objectContaining({ serverId: 'memory', transport: 'stdio', status: 'connected' })]);
      const names = (await scene.stores.mcpCatalog.latest(scene.tenantId, 'memory')).map((row) => row.registryName).sort();
      expect(names).toEqual(expect.arrayContaining(['mcp.memory.create_entities', 'mcp.memory.read_graph', 'mcp.memory.search_nodes']));

      const created = await scene.run('mcp.memory.create_entities', {
        entities: [{ name: 'veetbot', entityType: 'project', observations: ['governs every tool call'] }],
      });
      expectOutcome(created.item, 'succeeded', 'tool.ok');
      // The server wrote where the configuration said — not beside its own files.
      expect(readFileSync(memoryFile, 'utf8')).toContain('"name":"veetbot"');
      expect(existsSync(packageDefault)).toBe(defaultExisted);

      const graph = await scene.run('mcp.memory.read_graph', {});
      expectOutcome(graph.item, 'succeeded', 'tool.ok');
      expect(spanOf(graph.item, 'mcp.memory.read_graph')).toContain('governs every tool call');
      const found = await scene.run('mcp.memory.search_nodes', { query: 'veetbot' });
      expectOutcome(found.item, 'succeeded', 'tool.ok');
      expect(spanOf(found.item, 'mcp.memory.search_nodes')).toContain('veetbot');
      await closeAndExpectNoChildren(scene);
    });
  });
});
