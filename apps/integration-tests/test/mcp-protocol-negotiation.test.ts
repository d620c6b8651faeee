import { describe, expect, it } from 'vitest';
import { drivers } from '../src/test-database';
import { httpServer, textParts, unwrapEnvelope } from '../src/mcp-harness';
import { launchScript, MODERN_HTTP_SERVER } from '../src/mcp-servers';
import { EverythingHttpServer, npmStdioServer, NPM_SERVER_ENTRIES } from '../src/npm-servers';
import { expectOutcome, useMcpSuite } from './mcp-suite';

/**
 * The client adapter on the SDK's 2.x client (docs/adr/0044, "The client adapter moved"): it
 * speaks 2026-07-28 to a server that offers it (a real SDK 2.x server, a child process) and
 * still 2025-11-25 to a 2025-era peer (the real server-everything from npm, over HTTP and
 * stdio). Every call goes through the full pipeline of mcp-harness.ts.
 */
describe.each(drivers())('the MCP revision the adapter speaks (%s)', (driver) => {
  const suite = useMcpSuite(driver);

  it('a 2026-07-28 server over HTTP: discovered with server/discover, no initialize, every request in 2026-07-28', async () => {
    const { ready } = await launchScript(MODERN_HTTP_SERVER);
    const base = `http://127.0.0.1:${ready.port as number}`;
    const scene = await suite.open({ servers: [httpServer('modern', `${base}/mcp`)] });
    expect(scene.preparation.servers).toEqual([
      expect.objectContaining({ serverId: 'modern', status: 'connected', reasonCode: null, protocolVersion: '2026-07-28' }),
    ]);
    const echo = await scene.run('mcp.modern.echo', { message: 'in the new revision' });
    expectOutcome(echo.item, 'succeeded', 'tool.ok');
    expect(textParts(echo.item).map((part) => unwrapEnvelope(part.text)?.span)).toEqual(['Echo: in the new revision']);

    // What the server saw: the probe, then the listing and the call, each naming 2026-07-28 —
    // never a 2025 `initialize`.
    const seen = (await (await fetch(`${base}/__seen`)).json()) as { rpcMethod: string | null; protocolHeader: string | null }[];
    const methods = seen.map((entry) => entry.rpcMethod);
    expect(methods[0]).toBe('server/discover');
    expect(methods).not.toContain('initialize');
    expect(methods).toEqual(expect.arrayContaining(['tools/list', 'tools/call']));
    for (const entry of seen.filter((e) => e.rpcMethod === 'tools/list' || e.rpcMethod === 'tools/call'))
      expect(entry.protocolHeader).toBe('2026-07-28');
  });

  it('the 2025-era server-everything: 2025-11-25 over HTTP (the probe falls back) and over stdio', async () => {
    const everything = await EverythingHttpServer.start();
    try {
      const scene = await suite.open({
        servers: [
          httpServer('evhttp', everything.url),
          npmStdioServer('evstdio', NPM_SERVER_ENTRIES.everything, ['stdio'], {
            sideEffect: 'external_read',
            risk: 'low',
            idempotency: 'read_only',
          }),
        ],
      });
      const byId = Object.fromEntries(scene.preparation.servers.map((s) => [s.serverId, s]));
      expect(byId.evhttp).toMatchObject({ status: 'connected', transport: 'http', protocolVersion: '2025-11-25' });
      expect(byId.evstdio).toMatchObject({ status: 'connected', transport: 'stdio', protocolVersion: '2025-11-25' });
      for (const server of ['evhttp', 'evstdio']) {
        const echo = await scene.run(`mcp.${server}.echo`, { message: `over ${server}` });
        expectOutcome(echo.item, 'succeeded', 'tool.ok');
        expect(textParts(echo.item).map((part) => unwrapEnvelope(part.text)?.span)).toEqual([`Echo: over ${server}`]);
      }
    } finally {
      await everything.stop();
    }
  });
});
