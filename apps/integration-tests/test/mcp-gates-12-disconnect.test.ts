import { describe, expect, it } from 'vitest';
import { mcpToolName } from '@veetbot/domain';
import { drivers } from '../src/test-database';
import { httpServer, stdioServer } from '../src/mcp-harness';
import { ScriptableHttpServer, STDIO_DROP_SERVER } from '../src/mcp-servers';
import { expectOutcome, useMcpSuite } from './mcp-suite';

/**
 * Hard gate 12: "A server that disconnects mid-call yields unavailable with
 * tool.server_unreachable and a run that continues, asserted against a scripted server that
 * drops the connection rather than against a mocked exception." The servers here are real
 * processes: one exits in the middle of the call, one destroys the call's socket, one is not
 * running at all, and a stdio server's process exits mid-call.
 */
describe.each(drivers())('Hard gate 12 — a dropped connection is an outcome, not an exception (%s)', (driver) => {
  const suite = useMcpSuite(driver);
  const readItem = mcpToolName('scripted', 'read_item');
  const drop = mcpToolName('scripted', 'drop_connection');
  // Short per-call limits: a disconnection that goes unnoticed shows up as FAILED tool.timeout
  // after 8 s instead of holding the suite for the default 30.
  const scripted = (url: string) => httpServer('scripted', url, { timeoutSeconds: 8, requestTimeoutSeconds: 8 });

  it('a server process that exits mid-call: unavailable tool.server_unreachable; the run continues, and the restarted server answers', async () => {
    const server = await ScriptableHttpServer.start();
    const scene = await suite.open({ servers: [scripted(server.url)] });

    const dropped = await scene.run(drop, { mode: 'exit' });
    expectOutcome(dropped.item, 'unavailable', 'tool.server_unreachable');
    expect(dropped.row.status).toBe('failed');
    // The drop was real: the call reached the server, and the server process is gone.
    await server.exited();
    expect(server.running).toBe(false);

    // The run continues: a builtin in the same run succeeds ...
    const builtin = await scene.run('math.evaluate', { expression: '6 * 7' });
    expectOutcome(builtin.item, 'succeeded', 'tool.ok');
    expect(builtin.item.structured).toEqual({ value: 42 });

    // ... and so does the same server once it is back (a new process on the same port).
    await server.restart();
    const after = await scene.run(readItem, { id: 'back' });
    expectOutcome(after.item, 'succeeded', 'tool.ok');
    expect(after.item.content.some((part) => part.type === 'text' && part.text.includes('item back'))).toBe(true);
    expect((await server.counts()).calls.read_item).toBe(1);
  });

  it('a server that destroys the call socket mid-response: unavailable tool.server_unreachable; the same server answers the next call', async () => {
    const server = await ScriptableHttpServer.start();
    const scene = await suite.open({ servers: [scripted(server.url)] });

    const dropped = await scene.run(drop, { mode: 'destroy' });
    expectOutcome(dropped.item, 'unavailable', 'tool.server_unreachable');
    expect(server.running).toBe(true);
    expect((await server.counts()).calls.drop_connection).toBe(1);

    const builtin = await scene.run('math.evaluate', { expression: '1 + 1' });
    expectOutcome(builtin.item, 'succeeded', 'tool.ok');
    const after = await scene.run(readItem, { id: 'same' });
    expectOutcome(after.item, 'succeeded', 'tool.ok');
  });

  it('a server that is not running at call time: unavailable tool.server_unreachable, and the run continues', async () => {
    const server = await ScriptableHttpServer.start();
    const scene = await suite.open({ servers: [scripted(server.url)] });
    expect(scene.preparation.servers[0]?.status).toBe('connected');
    await server.stop();

    const started = Date.now();
    const down = await scene.run(readItem, { id: 'x' });
    expectOutcome(down.item, 'unavailable', 'tool.server_unreachable');
    // Refused connections are answered at once, not after the request timeout.
    expect(Date.now() - started).toBeLessThan(6_000);

    const builtin = await scene.run('math.evaluate', { expression: '2 ^ 10' });
    expectOutcome(builtin.item, 'succeeded', 'tool.ok');
  });

  it('a stdio server whose process exits mid-call: unavailable tool.server_unreachable, and the run continues', async () => {
    const scene = await suite.open({
      servers: [stdioServer('dropper', STDIO_DROP_SERVER, { timeoutSeconds: 8, requestTimeoutSeconds: 8 })],
    });
    expect(scene.preparation.servers.map((s) => [s.serverId, s.transport, s.status])).toEqual([['dropper', 'stdio', 'connected']]);

    const ping = await scene.run(mcpToolName('dropper', 'ping'), {});
    expectOutcome(ping.item, 'succeeded', 'tool.ok');

    const crashed = await scene.run(mcpToolName('dropper', 'crash'), {});
    expectOutcome(crashed.item, 'unavailable', 'tool.server_unreachable');

    const builtin = await scene.run('math.evaluate', { expression: '3 * 3' });
    expectOutcome(builtin.item, 'succeeded', 'tool.ok');
  });
});
