import { createHash, randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mcpToolName } from '@veetbot/domain';
import { drivers } from '../src/test-database';
import { stdioServer, unwrapEnvelope } from '../src/mcp-harness';
import { ECHO_ENV_SERVER } from '../src/mcp-servers';
import { eventsMentioning, expectOutcome, useMcpSuite } from './mcp-suite';

/**
 * Hard gate 16: "A stdio server's child process receives a constructed environment: the
 * synthesized tier plus the one declared credential variable and nothing else, asserted against
 * a server that echoes its environment back, with a sentinel planted in the worker's own
 * environment that must not appear in what comes back."
 *
 * The echo server is started by the adapter (an operator stdio server with the `env` auth
 * scheme), so what it reports is exactly what the adapter built. The synthesized tier is
 * RULINGS.md "Sandbox isolation": PATH, HOME (a private folder), LANG=C.UTF-8, TZ=UTC.
 */
describe.each(drivers())('Hard gate 16 — a stdio child gets a built environment (%s)', (driver) => {
  const suite = useMcpSuite(driver);
  const sentinelName = `VEETBOT_SENTINEL_${randomBytes(6).toString('hex').toUpperCase()}`;
  const sentinelValue = `sentinel-${randomBytes(16).toString('hex')}`;
  const fakeDatabaseUrl = `postgres://worker:${randomBytes(8).toString('hex')}@127.0.0.1:5432/worker`;
  let hadDatabaseUrl = false;

  beforeEach(() => {
    process.env[sentinelName] = sentinelValue;
    // The worker's own database URL is the canonical thing a child must not inherit; on a
    // PGlite-only run there is none, so plant one.
    hadDatabaseUrl = process.env.DATABASE_URL !== undefined;
    if (!hadDatabaseUrl) process.env.DATABASE_URL = fakeDatabaseUrl;
  });
  afterEach(() => {
    delete process.env[sentinelName];
    if (!hadDatabaseUrl) delete process.env.DATABASE_URL;
  });

  it('the child sees exactly PATH, HOME, LANG, TZ and the declared credential variable with the resolved value; the token is not on argv', async () => {
    const secret = `echo_${randomBytes(16).toString('hex')}`;
    const scene = await suite.open({
      servers: [stdioServer('echo', ECHO_ENV_SERVER, { authScheme: 'env', authName: 'ECHO_TOKEN', credentialRef: 'env:ECHO_SECRET' })],
      brokerEnv: { ECHO_SECRET: secret },
    });
    expect(scene.preparation.servers.map((s) => [s.serverId, s.transport, s.status])).toEqual([['echo', 'stdio', 'connected']]);

    const printed = await scene.run(mcpToolName('echo', 'print_environment'), {});
    expectOutcome(printed.item, 'succeeded', 'tool.ok');
    expect(printed.item.truncated).toBe(false);
    const part = printed.item.content[0];
    if (part?.type !== 'text') throw new Error('print_environment returned no text part');
    // The server's output is external text: enveloped, labelled, attributed.
    const framed = unwrapEnvelope(part.text);
    expect({ source: framed?.source, trust: framed?.trust, partTrust: part.trust }).toEqual({
      source: 'mcp.echo.print_environment',
      trust: 'external_untrusted',
      partTrust: 'external_untrusted',
    });
    const environment = JSON.parse(framed!.span) as Record<string, string>;

    // Nothing else: the exact key set.
    expect(Object.keys(environment).sort()).toEqual(['ECHO_TOKEN', 'HOME', 'LANG', 'PATH', 'TZ']);
    expect(environment.LANG).toBe('C.UTF-8');
    expect(environment.TZ).toBe('UTC');
    expect(environment.PATH).toMatch(/\S/);
    // HOME is a private folder, not the worker's own.
    expect(environment.HOME).toMatch(/^\//);
    expect(environment.HOME).not.toBe(process.env.HOME);
    // The child legitimately receives the resolved credential under the declared name; what the
    // server sends back is external output, and the adapter scrubs the revealed value from it
    // (§ Authentication: the value is "not a tool_invocations row"). The child's own digest
    // proves it received exactly the resolved value.
    expect(environment.ECHO_TOKEN).toMatch(/\S/);
    expect(part.text).not.toContain(secret);
    expect(JSON.stringify(printed.row.result)).not.toContain(secret);
    const digested = await scene.run(mcpToolName('echo', 'environment_digest'), {});
    expectOutcome(digested.item, 'succeeded', 'tool.ok');
    const digestPart = digested.item.content[0];
    if (digestPart?.type !== 'text') throw new Error('environment_digest returned no text part');
    const digests = JSON.parse(unwrapEnvelope(digestPart.text)?.span ?? 'null') as Record<string, string>;
    expect(Object.keys(digests).sort()).toEqual(['ECHO_TOKEN', 'HOME', 'LANG', 'PATH', 'TZ']);
    expect(digests.ECHO_TOKEN).toBe(createHash('sha256').update(secret).digest('hex'));
    // The planted sentinel and the worker's database URL are nowhere in what came back.
    expect(part.text).not.toContain(sentinelName);
    expect(part.text).not.toContain(sentinelValue);
    expect(part.text).not.toContain(process.env.DATABASE_URL!);
    expect(environment.DATABASE_URL).toBeUndefined();

    // The credential never reaches the command line (the process table).
    const whoami = await scene.run(mcpToolName('echo', 'whoami'), {});
    expectOutcome(whoami.item, 'succeeded', 'tool.ok');
    const argvPart = whoami.item.content[0];
    if (argvPart?.type !== 'text') throw new Error('whoami returned no text part');
    const argv = JSON.parse(unwrapEnvelope(argvPart.text)?.span ?? 'null') as string[];
    expect(argv.some((arg) => arg.endsWith('echo-env-server.ts'))).toBe(true);
    expect(argv.join('\u0000')).not.toContain(secret);

    // Nor an event payload, nor a catalog row.
    expect(eventsMentioning(await scene.events(), secret)).toEqual([]);
    const catalog = await scene.stores.mcpCatalog.latest(scene.tenantId, 'echo');
    expect(catalog.map((row) => row.remoteName).sort()).toEqual(['environment_digest', 'print_environment', 'whoami']);
    expect(JSON.stringify(catalog)).not.toContain(secret);
  });
});
