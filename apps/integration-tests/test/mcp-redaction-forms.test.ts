import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACTED } from '@veetbot/domain';
import { drivers } from '../src/test-database';
import { httpServer, textParts, unwrapEnvelope } from '../src/mcp-harness';
import { ScriptableHttpServer } from '../src/mcp-servers';
import { expectOutcome, stringsIn, useMcpSuite } from './mcp-suite';

/**
 * Issue 23 item 13 (docs/adr/0053): a hostile tenant-registered MCP server — the scripted HTTP
 * server, a real process — sends back the tenant secret it was presented as its bearer token,
 * in one encoding per call: hex (either case, `\xHH`), HTML character references (decimal, hex,
 * named), split across two text items (raw, and as HTML references), and the forms ADR 0018
 * already covered (base64, base64url, URL-encoding, JSON `\u00XX`). The secret is the tenant's
 * own (`secret:NAME`, sealed in tenant_secrets, resolved by the real broker). What reaches the
 * caller, the stored tool_invocations row and every event carry no form of it, and the marker
 * stands where the server put it.
 */
const SECRET = `tk&<"'>/${randomBytes(12).toString('hex')}`;
const HALF = Math.floor(SECRET.length / 2);
const hex = Buffer.from(SECRET, 'utf8').toString('hex');
const decimal = (value: string) => [...value].map((c) => `&#${c.codePointAt(0)};`).join('');

/** Every form the server sends, and the halves of the split: none may survive anywhere. */
const FORBIDDEN = [
  SECRET,
  SECRET.slice(0, HALF),
  SECRET.slice(HALF),
  SECRET.slice(8), // the random part alone
  hex,
  hex.toUpperCase(),
  hex.slice(16), // the random part's hex
  decimal(SECRET),
  decimal(SECRET.slice(0, HALF)),
  decimal(SECRET.slice(HALF)),
  Buffer.from(SECRET).toString('base64').slice(4, -4),
  Buffer.from(SECRET).toString('base64url').slice(4, -4),
  encodeURIComponent(SECRET),
  SECRET.slice(8)
    .split('')
    .map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`)
    .join(''),
];

/** What each form's text becomes once the adapter redacted it (the server's own framing kept). */
const EXPECTED: Readonly<Record<string, readonly string[]>> = {
  raw: [`the token is ${REDACTED}`],
  hex_lower: [`digest: ${REDACTED}`],
  hex_upper: [`DIGEST: ${REDACTED}`],
  hex_escapes: [`b"${REDACTED}"`],
  html_decimal: [`<p>${REDACTED}</p>`],
  html_hex: [`<p>${REDACTED}</p>`],
  html_named: [`<input value="${REDACTED}">`],
  split: [`first: ${REDACTED}`, `${REDACTED} :second`],
  split_html: [`<b>${REDACTED}`, `${REDACTED}</b>`],
  base64: [`basic ${REDACTED}`],
  base64url: [`jwt-ish ${REDACTED}`],
  url: [`https://example.com/cb?token=${REDACTED}`],
  json_u: [`{"token":"${REDACTED}"}`],
};

describe.each(drivers())('a hostile tenant server reflecting the tenant secret in every form (%s)', (driver) => {
  const suite = useMcpSuite(driver);
  let server: ScriptableHttpServer;

  beforeAll(async () => {
    server = await ScriptableHttpServer.start({ token: SECRET });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('each form: the item, the stored row and the events carry none of it; the marker stands in its place', async () => {
    await server.control({
      action: 'set_tools',
      add: [
        {
          name: 'reflect_credential',
          description: 'Send back the presented credential, encoded.',
          inputSchema: { type: 'object', properties: { form: { type: 'string' } }, required: ['form'], additionalProperties: false },
        },
      ],
    });
    const scene = await suite.open({
      servers: [],
      tenantServers: [
        httpServer('hostile', server.url, { authScheme: 'bearer', credentialRef: 'secret:HOSTILE_TOKEN', sideEffect: 'external_read' }),
      ],
      tenantSecrets: { HOSTILE_TOKEN: SECRET },
    });
    expect(scene.preparation.servers.map((s) => [s.serverId, s.status])).toEqual([['hostile', 'connected']]);
    for (const [form, expected] of Object.entries(EXPECTED)) {
      const { item, row } = await scene.run('mcp.hostile.reflect_credential', { form });
      expectOutcome(item, 'succeeded', 'tool.ok');
      // The server did send the secret there: the marker is exactly where it put it.
      expect(
        textParts(item).map((p) => unwrapEnvelope(p.text)?.span ?? p.text),
        form,
      ).toEqual(expected);
      const strings = [...stringsIn(item), ...stringsIn(row), JSON.stringify(item), JSON.stringify(row)];
      for (const where of strings) for (const forbidden of FORBIDDEN) expect(where, `${form}: ${forbidden}`).not.toContain(forbidden);
    }
    const events = await scene.events();
    for (const where of stringsIn(events.map((e) => e.payload))) for (const forbidden of FORBIDDEN) expect(where).not.toContain(forbidden);
    await scene.close();
  });
});
