import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../../..');

/** The real @modelcontextprotocol/server-everything from npm (a devDependency of this app). */
const EVERYTHING = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist',
  'index.js',
);

/** The real CLI in a real process, as `pnpm veetbot mcp check …` runs it. */
async function veetbot(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'apps/cli/src/main.ts', ...args], {
      cwd: root,
      env: process.env,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Processes (any parent: a stdio server leads its own group) whose command line holds `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

// The platform's 10 s connect timeout is meant for a server, not for a two-core machine running
// several test suites at once: starting server-everything (express and all) can take longer here.
const LOADED_MACHINE_TIMEOUTS = ['--connect-timeout', '60', '--request-timeout', '60'];

// Each check opens an in-memory PGlite and migrates it, as the platform's stores need: on a
// loaded two-core machine that alone can take tens of seconds.
describe('veetbot mcp check', { timeout: 180_000 }, () => {
  it('stdio: the real server-everything — handshake, hyphenated names mapped, echo through the full pipeline, no orphan', async () => {
    // server-everything ignores arguments after its transport name: a marker to find its process by.
    const marker = `veetbot-check-${randomBytes(6).toString('hex')}`;
    const { code, stdout, stderr } = await veetbot(
      'mcp',
      'check',
      '--stdio',
      `${process.execPath} ${EVERYTHING} stdio ${marker}`,
      '--server-id',
      'everything',
      '--call',
      'echo',
      '--args',
      '{"message":"hi"}',
      '--call',
      'get-sum',
      '--args',
      '{"a":2,"b":3}',
      '--json',
      ...LOADED_MACHINE_TIMEOUTS,
    );
    expect({ code, stderr }, stdout).toEqual({ code: 0, stderr: '' });
    const report = JSON.parse(stdout);
    expect(report).toMatchObject({
      ok: true,
      reason_code: null,
      config_errors: [],
      server: { server_id: 'everything', transport: 'stdio', status: 'connected', reason_code: null },
    });
    expect(report.server.catalog_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(report.server.tool_count).toBe(report.tools.length);
    // Remote names with hyphens, normalized by the domain function; every tool pinned.
    // Each tool's input schema as registered (docs/adr/0059): what calls are validated against.
    const echo = report.tools.find((t: { remote_name: string | null }) => t.remote_name === 'echo');
    expect(echo.input_schema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
    expect(report.tools.every((t: { input_schema?: { type?: unknown } }) => t.input_schema?.type === 'object')).toBe(true);
    expect(report.tools.map(({ input_schema: _schema, ...rest }: Record<string, unknown>) => rest)).toEqual(
      expect.arrayContaining([
        { remote_name: 'echo', registry_name: 'mcp.everything.echo', model_visible: true, pinned: true },
        { remote_name: 'get-env', registry_name: 'mcp.everything.get_env', model_visible: true, pinned: true },
        { remote_name: 'get-sum', registry_name: 'mcp.everything.get_sum', model_visible: true, pinned: true },
        { remote_name: null, registry_name: 'mcp.everything.read_resource', model_visible: true, pinned: true },
      ]),
    );
    expect(report.rejected).toEqual([]);
    expect(report.conflicts).toEqual([]);
    // The call: through submitStep, recorded, a ToolResultItem with the server's text as enveloped external content.
    expect(report.call).toMatchObject({ remote_name: 'echo', tool_name: 'mcp.everything.echo', pending_approval: false });
    expect(report.call.item).toMatchObject({
      tool_name: 'mcp.everything.echo',
      trust: 'external_untrusted',
      outcome: { status: 'succeeded', reason_code: 'tool.ok' },
    });
    expect(report.call.item.content).toHaveLength(1);
    expect(report.call.item.content[0]).toMatchObject({ type: 'text', trust: 'external_untrusted' });
    expect(report.call.item.content[0].text).toMatch(
      /^\u27E6untrusted source="mcp\.everything\.echo" trust="external_untrusted" nonce="[0-9a-f]{16}"\u27E7\nEcho: hi\n/,
    );
    // Two --call pairs: two steps of one run, in order; `call` is the first.
    expect(
      report.calls.map((c: { tool_name: string; item: { outcome: { status: string } } }) => [c.tool_name, c.item.outcome.status]),
    ).toEqual([
      ['mcp.everything.echo', 'succeeded'],
      ['mcp.everything.get_sum', 'succeeded'],
    ]);
    expect(report.calls[0]).toEqual(report.call);
    expect(report.calls[1].item.content[0].text).toMatch(/\b5\b/);
    // Clean shutdown: the stdio server it started is gone with it.
    expect(processesWith(marker)).toEqual([]);
  });

  it('--elicitation accept-defaults answers for the operator, and declines a form whose required field has no default (docs/adr/0060)', async () => {
    const { code, stdout } = await veetbot(
      'mcp',
      'check',
      '--stdio',
      `${process.execPath} ${EVERYTHING} stdio`,
      '--server-id',
      'everything',
      '--side-effect',
      'none',
      '--risk',
      'low',
      '--idempotency',
      'read_only',
      '--elicitation',
      'accept-defaults',
      '--call',
      'trigger-elicitation-request',
      '--json',
      ...LOADED_MACHINE_TIMEOUTS,
    );
    expect(code, stdout).toBe(0);
    const report = JSON.parse(stdout);
    // server-everything offers its eliciting tool only to a client that advertises elicitation.
    expect(report.tools.map((t: { remote_name: string | null }) => t.remote_name)).toContain('trigger-elicitation-request');
    // Its form requires `name`, which has no default: the operator never chose one, so it is declined.
    expect(report.elicitations).toEqual([
      {
        tool_name: 'mcp.everything.trigger_elicitation_request',
        message: 'Please provide inputs for the following fields:',
        fields: expect.arrayContaining(['name', 'check', 'integer']),
        action: 'decline',
      },
    ]);
    expect(report.call.item.outcome.status).toBe('succeeded');
    expect(report.call.item.content[0].text).toContain('User declined');
  });

  it('--elicitation takes accept-defaults or decline only (a usage error, exit 2)', async () => {
    const { code, stderr } = await veetbot('mcp', 'check', '--url', 'http://127.0.0.1:1/mcp', '--elicitation', 'accept-all');
    expect(code).toBe(2);
    expect(stderr).toContain('--elicitation takes accept-defaults or decline');
  });

  // docs/adr/0077: the check-mode user agent only behind its explicit flag, its URLs checked first.
  it('--oauth-authorize takes auto-approve only, and the client metadata URL must be https (usage errors, exit 2)', async () => {
    const mode = await veetbot('mcp', 'check', '--url', 'http://127.0.0.1:1/mcp', '--oauth-authorize', 'always');
    expect(mode.code).toBe(2);
    expect(mode.stderr).toContain('--oauth-authorize takes auto-approve');
    const cimd = await veetbot(
      'mcp',
      'check',
      '--url',
      'http://127.0.0.1:1/mcp',
      '--oauth-authorize',
      'auto-approve',
      '--oauth-client-metadata-url',
      'http://client.example/metadata.json',
    );
    expect(cimd.code).toBe(2);
    expect(cimd.stderr).toContain('--oauth-client-metadata-url takes an https URL');
    const orphan = await veetbot('mcp', 'check', '--url', 'http://127.0.0.1:1/mcp', '--oauth-client-secret-ref', 'env:S');
    expect(orphan.code).toBe(2);
    expect(orphan.stderr).toContain('go with --oauth-client-id');
  });

  // docs/adr/0083: oauth2_client's private_key_jwt; the flags are validated as configuration.
  it('--client-assertion-* go together, and an algorithm outside the set is a configuration error (exit 1)', async () => {
    const base = ['mcp', 'check', '--url', 'http://127.0.0.1:1/mcp', '--allow-http', '--allow-private', '--auth-scheme', 'oauth2_client'];
    const auth = ['--credential-ref', 'env:KEY', '--token-endpoint', 'http://127.0.0.1:1/token'];
    const alone = await veetbot(...base, ...auth, '--client-assertion-alg', 'ES256');
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--client-assertion-alg and --client-assertion-client-id go together');
    const orphan = await veetbot(...base, ...auth, '--client-assertion-audience', 'https://as.example/');
    expect(orphan.code).toBe(2);
    expect(orphan.stderr).toContain('go with --client-assertion-alg');
    const mac = await veetbot(...base, ...auth, '--client-assertion-alg', 'HS256', '--client-assertion-client-id', 'svc', '--json');
    expect(mac.code).toBe(1);
    expect(JSON.parse(mac.stdout)).toMatchObject({ reason_code: 'mcp.config.client_assertion_invalid' });
  });

  it('a bad configuration: exit 1 with the mcp.config code, nothing dialled; human and --json output', async () => {
    const bearerOnStdio = await veetbot(
      'mcp',
      'check',
      '--stdio',
      `${process.execPath} ${EVERYTHING} stdio`,
      '--auth-scheme',
      'bearer',
      '--credential-ref',
      'env:SOME_TOKEN',
      '--json',
    );
    expect(bearerOnStdio.code).toBe(1);
    const report = JSON.parse(bearerOnStdio.stdout);
    expect(report).toMatchObject({ ok: false, reason_code: 'mcp.config.auth_scheme_transport', server: null, call: null });
    expect(report.config_errors).toEqual([expect.objectContaining({ code: 'mcp.config.auth_scheme_transport', path: 'authScheme' })]);

    // Plain http to loopback without the operator's allowances: refused by the egress policy, statically.
    const refused = await veetbot('mcp', 'check', '--url', 'http://127.0.0.1:9/mcp');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('config error  mcp.config.endpoint_refused at endpoint');
    expect(refused.stderr).toContain('veetbot: mcp check failed: mcp.config.endpoint_refused');

    const tier0 = await veetbot(
      'mcp',
      'check',
      '--stdio',
      `${process.execPath} ${EVERYTHING} stdio`,
      '--env',
      'NODE_OPTIONS=--require /tmp/x.js',
      '--json',
    );
    expect(tier0.code).toBe(1);
    expect(JSON.parse(tier0.stdout)).toMatchObject({ reason_code: 'mcp.config.env_name_tier0' });

    // An operator file is validated as the worker validates VEETBOT_CONFIG: every error, with its path.
    const file = join(mkdtempSync(join(tmpdir(), 'veetbot-mcp-check-')), 'operator.json');
    writeFileSync(
      file,
      JSON.stringify({
        mcp: {
          servers: [
            {
              server_id: 'memory',
              transport: 'stdio',
              endpoint: `${process.execPath} server.js`,
              auth_scheme: 'env',
              auth_name: 'PATH',
              credential_ref: 'env:X',
            },
          ],
        },
      }),
    );
    const fromFile = await veetbot('mcp', 'check', '--config', file, '--json');
    expect(fromFile.code).toBe(1);
    expect(JSON.parse(fromFile.stdout)).toMatchObject({
      ok: false,
      reason_code: 'mcp.config.auth_name_tier0',
      config_errors: [{ code: 'mcp.config.auth_name_tier0', path: 'mcp.servers[0].auth_name' }],
    });

    const usage = await veetbot('mcp', 'check', '--server-id', 'x');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('cli.usage');
  });

  it("--config applies the operator file's egress section (ADR 0022), as the product does", async () => {
    const port = await closedPort();
    const dir = mkdtempSync(join(tmpdir(), 'veetbot-mcp-check-egress-'));
    const server = { server_id: 'dev', transport: 'http', endpoint: `http://127.0.0.1:${port}/mcp`, auth_scheme: 'none' };
    const strict = join(dir, 'strict.json');
    writeFileSync(strict, JSON.stringify({ mcp: { servers: [server] } }));
    const refused = await veetbot('mcp', 'check', '--config', strict, '--json');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ reason_code: 'mcp.config.endpoint_refused', server: null });
    // The same file with the switches: past the egress policy, and dialled (nobody listens there).
    const local = join(dir, 'local.json');
    writeFileSync(local, JSON.stringify({ mcp: { egress: { allow_http: true, allow_private_addresses: true }, servers: [server] } }));
    const dialled = await veetbot('mcp', 'check', '--config', local, '--json', ...LOADED_MACHINE_TIMEOUTS);
    expect(dialled.code).toBe(1);
    expect(JSON.parse(dialled.stdout)).toMatchObject({ reason_code: 'tool.server_unreachable', config_errors: [] });
  });

  it('an unreachable URL: exit 1 with tool.server_unreachable', async () => {
    const port = await closedPort();
    const { code, stdout, stderr } = await veetbot(
      'mcp',
      'check',
      '--url',
      `http://127.0.0.1:${port}/mcp`,
      '--server-id',
      'gone',
      '--allow-http',
      '--allow-private',
      '--call',
      'anything',
      '--args',
      '{}',
    );
    expect(code).toBe(1);
    expect(stdout).toMatch(/^server\s+gone \(http\)$/m);
    expect(stdout).toMatch(/^status\s+failed tool\.server_unreachable$/m);
    // The detail says why (docs/adr/0056): nothing listens there.
    expect(stdout).toMatch(/^detail\s+The connection to the server could not be made \(ECONNREFUSED\)\.$/m);
    expect(stderr).toContain('veetbot: mcp check failed: tool.server_unreachable');
  });

  it('a name that does not resolve: the detail says DNS (docs/adr/0056)', async () => {
    const dns = await veetbot('mcp', 'check', '--url', 'https://mcp.veetbot-test.invalid/mcp', '--server-id', 'nowhere', '--json');
    expect(dns.code).toBe(1);
    expect(JSON.parse(dns.stdout)).toMatchObject({
      reason_code: 'tool.server_unreachable',
      server: {
        status: 'failed',
        reason_code: 'tool.server_unreachable',
        detail: "DNS: the server's host name did not resolve (egress.resolve_failed).",
      },
    });
  });
});
