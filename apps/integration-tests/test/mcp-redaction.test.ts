import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { REDACTED } from '@veetbot/domain';
import { liveProcessGroups } from '@veetbot/mcp-adapter';
import { drivers } from '../src/test-database';
import { stdioServer, textParts, unwrapEnvelope } from '../src/mcp-harness';
import { ECHO_ENV_SERVER } from '../src/mcp-servers';
import { npmStdioServer, NPM_SERVER_ENTRIES } from '../src/npm-servers';
import { eventsMentioning, expectOutcome, useMcpSuite } from './mcp-suite';

/**
 * Issue 10 item 2 (docs/adr/0018) against someone else's server: server-everything's get-env
 * returns its whole environment as JSON text, so a stdio credential holding `"` or `\` comes
 * back JSON-escaped — a form the old scrubber, which matched only the raw value, let through
 * into the pipeline result and tool_invocations.result.
 */
describe.each(drivers())('a credential echoed back by server-everything get-env is redacted in every form (%s)', (driver) => {
  const suite = useMcpSuite(driver);

  it('a stdio credential with " and \\ comes back redacted in the item and the tool_invocations row', async () => {
    const secret = `tok"en\\with-"quotes"\\and\\backslashes-${randomBytes(8).toString('hex')}`;
    const escaped = JSON.stringify(secret).slice(1, -1);
    const forms = [
      secret,
      escaped,
      JSON.stringify(escaped).slice(1, -1),
      encodeURIComponent(secret),
      Buffer.from(secret).toString('base64'),
    ];
    // The variable's name is the credential's; the broker reads it from the scene's environment.
    const scene = await suite.open({
      servers: [
        npmStdioServer('everything', NPM_SERVER_ENTRIES.everything, ['stdio'], {
          sideEffect: 'external_read',
          risk: 'low',
          idempotency: 'read_only',
          authScheme: 'env',
          authName: 'EVERYTHING_API_TOKEN',
          credentialRef: 'env:EVERYTHING_SECRET',
        }),
      ],
      brokerEnv: { EVERYTHING_SECRET: secret },
    });
    try {
      expect(scene.preparation.servers.map((s) => [s.serverId, s.status])).toEqual([['everything', 'connected']]);
      const env = await scene.run('mcp.everything.get_env', {});
      expectOutcome(env.item, 'succeeded', 'tool.ok');
      const [part] = textParts(env.item);
      const span = unwrapEnvelope(part!.text)!.span;
      // The server did send the credential (its environment has the variable), and what came
      // back in its place is the marker, inside still-valid JSON.
      const environment = JSON.parse(span) as Record<string, string>;
      expect(environment.EVERYTHING_API_TOKEN).toBe(REDACTED);
      // env.row is the tool_invocations row as the store reads it back.
      for (const where of [JSON.stringify(env.item), JSON.stringify(env.row.result), JSON.stringify(env.row)]) {
        for (const form of forms) expect(where).not.toContain(form);
        expect(where).not.toContain('with-');
      }
      expect(JSON.stringify(env.row.result)).toContain(REDACTED);
      expect(eventsMentioning(await scene.events(), 'with-')).toEqual([]);
    } finally {
      await scene.close();
    }
    expect(liveProcessGroups()).toEqual([]);
  });

  it('a server that puts the credential in a tool description: what the model is shown and the stored catalog carry none of it', async () => {
    const secret = `catalog"leak\\${randomBytes(8).toString('hex')}`;
    const scene = await suite.open({
      servers: [
        stdioServer('echo', ECHO_ENV_SERVER, {
          authScheme: 'env',
          authName: 'ECHO_TOKEN',
          credentialRef: 'env:ECHO_SECRET',
          env: { ECHO_LEAK_IN_CATALOG: '1' },
        }),
      ],
      brokerEnv: { ECHO_SECRET: secret },
    });
    try {
      expect(scene.preparation.servers.map((s) => [s.serverId, s.status])).toEqual([['echo', 'connected']]);
      const catalog = await scene.stores.mcpCatalog.latest(scene.tenantId, 'echo');
      const stored = JSON.stringify(catalog);
      // What the model is shown: the session's pinned tool set.
      const pinned = JSON.stringify(scene.pinned);
      expect(pinned).toContain('mcp.echo.print_environment');
      // The catalog history keeps no description; the pin carries it, marker in place of the value.
      expect(pinned).toContain(REDACTED);
      for (const where of [stored, pinned]) {
        for (const form of [secret, JSON.stringify(secret).slice(1, -1), Buffer.from(secret).toString('base64')])
          expect(where).not.toContain(form);
      }
    } finally {
      await scene.close();
    }
  });
});
