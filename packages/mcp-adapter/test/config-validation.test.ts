import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TIER0_ENVIRONMENT_NAMES } from '@veetbot/domain';
import { DefaultEgressPolicy, loadOperatorConfig, OperatorConfigError, validateServerConfig } from '../src/index';
import type { ConfigValidationContext } from '../src/config/validate-server-config';

const egress = new DefaultEgressPolicy({ allowHosts: ['mcp.example.com', '*.auth.example.com'] });
const tenant: ConfigValidationContext = { source: 'tenant', egress };
const operator: ConfigValidationContext = { source: 'operator', egress };

const http = (overrides: Record<string, unknown> = {}) => ({
  serverId: 'acme',
  transport: 'http',
  endpoint: 'https://mcp.example.com/mcp',
  authScheme: 'none',
  ...overrides,
});
const stdio = (overrides: Record<string, unknown> = {}) => ({
  serverId: 'local',
  transport: 'stdio',
  endpoint: '/usr/bin/node server.js',
  authScheme: 'none',
  ...overrides,
});

function codes(input: unknown, context: ConfigValidationContext = tenant): string[] {
  const verdict = validateServerConfig(input, context);
  return verdict.ok ? [] : verdict.errors.map((e) => e.code);
}

describe('validateServerConfig: Gate 14, one rule at a time, no server and no broker', () => {
  it('accepts a minimal valid row and applies the most restrictive classification', () => {
    const verdict = validateServerConfig(http(), tenant);
    expect(verdict.ok).toBe(true);
    if (!verdict.ok) return;
    expect(verdict.config).toMatchObject({
      sideEffect: 'external_write',
      risk: 'high',
      idempotency: 'non_idempotent',
      requiredScopes: [],
      credentialRef: null,
      authName: null,
      enabled: true,
    });
  });

  it('a scheme outside the closed five', () => {
    expect(codes(http({ authScheme: 'basic', credentialRef: 'secret:X' }))).toEqual(['mcp.config.auth_scheme_unknown']);
    expect(codes(http({ authScheme: undefined }))).toEqual(['mcp.config.auth_scheme_unknown']);
  });

  it('a scheme on the wrong transport: env on http', () => {
    expect(codes(http({ authScheme: 'env', authName: 'TOKEN', credentialRef: 'secret:T' }))).toEqual(['mcp.config.auth_scheme_transport']);
  });

  it.each(['bearer', 'header', 'oauth2_client'])('a scheme on the wrong transport: %s on stdio', (scheme) => {
    const extra: Record<string, unknown> = { authScheme: scheme, credentialRef: 'env:T' };
    if (scheme === 'header') extra.authName = 'X-Api-Key';
    if (scheme === 'oauth2_client') extra.tokenEndpoint = 'https://login.auth.example.com/token';
    expect(codes(stdio(extra), operator)).toEqual(['mcp.config.auth_scheme_transport']);
  });

  it('ADR 0017: a tenant row names only its own secret:NAME; env:, file:, a value or a bad name are refused, never echoed', () => {
    expect(codes(http({ authScheme: 'bearer', credentialRef: 'secret:ACME_TOKEN' }))).toEqual([]);
    for (const ref of ['env:DATABASE_URL', 'env:VEETBOT_DEMO_API_KEY', 'file:/etc/shadow', 'file:/run/secrets/token']) {
      expect(codes(http({ authScheme: 'bearer', credentialRef: ref })), ref).toEqual(['mcp.config.credential_ref_not_allowed']);
    }
    for (const ref of [
      'vbk_inline_secret_value_123456',
      'secret:',
      'secret:1abc',
      'secret:a b',
      `secret:${'x'.repeat(65)}`,
      'SECRET:X',
      'env:lower',
      'file:relative',
    ]) {
      const verdict = validateServerConfig(http({ authScheme: 'bearer', credentialRef: ref }), tenant);
      expect(verdict.ok, ref).toBe(false);
      if (verdict.ok) continue;
      expect(verdict.errors.map((e) => e.code)).toEqual(['mcp.config.credential_ref_not_allowed']);
      if (ref !== 'secret:') expect(JSON.stringify(verdict.errors)).not.toContain(ref);
    }
  });

  it('ADR 0017: the operator configuration uses env: and file:, never secret: or a value', () => {
    expect(codes(http({ authScheme: 'bearer', credentialRef: 'env:ACME_TOKEN' }), operator)).toEqual([]);
    expect(codes(http({ authScheme: 'bearer', credentialRef: 'file:/run/secrets/acme' }), operator)).toEqual([]);
    expect(codes(http({ authScheme: 'bearer', credentialRef: 'secret:ACME_TOKEN' }), operator)).toEqual([
      'mcp.config.credential_ref_not_allowed',
    ]);
    expect(codes(http({ authScheme: 'bearer', credentialRef: 'sk-pasted-value' }), operator)).toEqual([
      'mcp.config.credential_ref_invalid',
    ]);
  });

  it('server_id servers is reserved (its tool scopes would be mcp.servers.*, the configuration scope)', () => {
    expect(codes(http({ serverId: 'servers' }))).toEqual(['mcp.config.server_id_reserved']);
    expect(codes(http({ serverId: 'servers' }), operator)).toEqual(['mcp.config.server_id_reserved']);
  });

  it('none with a credential reference', () => {
    expect(codes(http({ credentialRef: 'secret:TOKEN' }))).toEqual(['mcp.config.credential_ref_forbidden']);
  });

  it.each(['bearer', 'header'])('%s without a credential reference', (scheme) => {
    expect(codes(http({ authScheme: scheme, authName: scheme === 'header' ? 'X-Key' : null }))).toEqual([
      'mcp.config.credential_ref_required',
    ]);
  });

  it('header without a name, and with one outside ^[A-Za-z0-9_-]{1,64}$', () => {
    expect(codes(http({ authScheme: 'header', credentialRef: 'secret:T' }))).toEqual(['mcp.config.auth_name_required']);
    expect(codes(http({ authScheme: 'header', credentialRef: 'secret:T', authName: 'X Key' }))).toEqual(['mcp.config.auth_name_invalid']);
    expect(codes(http({ authScheme: 'header', credentialRef: 'secret:T', authName: 'x'.repeat(65) }))).toEqual([
      'mcp.config.auth_name_invalid',
    ]);
  });

  it('env without a name', () => {
    expect(codes(stdio({ authScheme: 'env', credentialRef: 'env:T' }), operator)).toEqual(['mcp.config.auth_name_required']);
  });

  it.each(['Authorization', 'authorization', 'AUTHORIZATION'])('header naming %s', (name) => {
    expect(codes(http({ authScheme: 'header', credentialRef: 'secret:T', authName: name }))).toEqual([
      'mcp.config.auth_name_authorization',
    ]);
  });

  // docs/adr/0064: the credential would replace the transport's own header, or stand in for a
  // tool argument in SEP-2243's Mcp-Param-* namespace.
  it.each([
    'Host',
    'content-length',
    'Transfer-Encoding',
    'Mcp-Session-Id',
    'MCP-Protocol-Version',
    'Mcp-Method',
    'Mcp-Name',
    'Mcp-Param-Region',
    'mcp-param-x',
    'Idempotency-Key',
    'traceparent',
  ])('header naming the reserved %s', (name) => {
    expect(codes(http({ authScheme: 'header', credentialRef: 'secret:T', authName: name }))).toEqual(['mcp.config.auth_name_reserved']);
  });

  it('header naming an ordinary key header is fine', () => {
    for (const name of ['X-Api-Key', 'Api-Key', 'Mcp-Params', 'X-Mcp-Param-Region'])
      expect(codes(http({ authScheme: 'header', credentialRef: 'secret:T', authName: name })), name).toEqual([]);
  });

  it('env naming a tier-0 variable, read from the domain list', () => {
    for (const name of ['PATH', 'LD_PRELOAD', 'NODE_OPTIONS', 'DATABASE_URL', 'path', 'VEETBOT_ANYTHING']) {
      expect(codes(stdio({ authScheme: 'env', credentialRef: 'env:T', authName: name }), operator), name).toEqual([
        'mcp.config.auth_name_tier0',
      ]);
    }
    // Every name on the one list is refused (the list, not a copy of it).
    for (const name of TIER0_ENVIRONMENT_NAMES) {
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) continue;
      expect(codes(stdio({ authScheme: 'env', credentialRef: 'env:T', authName: name }), operator)).toEqual(['mcp.config.auth_name_tier0']);
    }
    expect(codes(stdio({ authScheme: 'env', credentialRef: 'env:T', authName: 'ACME_TOKEN' }), operator)).toEqual([]);
  });

  // docs/adr/0077: the delegated flow's pre-registered client, operator only, secret by reference.
  it('oauth_client: the operator file only, http with auth_scheme none, its secret a reference', () => {
    const client = { client_id: 'c-1', client_secret_ref: 'env:OAUTH_SECRET', token_endpoint_auth_method: 'client_secret_post' };
    expect(codes(http({ oauthClient: client }), operator)).toEqual([]);
    expect(codes(http({ oauthClient: { client_id: 'public', token_endpoint_auth_method: 'none' } }), operator)).toEqual([]);
    expect(codes(http({ oauthClient: client }))).toEqual(['mcp.config.operator_only']);
    expect(codes(http({ oauthClient: { ...client, client_secret_ref: 's3cr3t-inline' } }), operator)).toEqual([
      'mcp.config.credential_ref_invalid',
    ]);
    expect(
      codes(http({ oauthClient: { client_id: 'p', client_secret_ref: 'env:S', token_endpoint_auth_method: 'none' } }), operator),
    ).toEqual(['mcp.config.oauth_client_invalid']);
    expect(codes(http({ oauthClient: { client_id: 'c', token_endpoint_auth_method: 'client_secret_basic' } }), operator)).toEqual([
      'mcp.config.oauth_client_invalid',
    ]);
    expect(codes(http({ authScheme: 'bearer', credentialRef: 'env:T', oauthClient: client }), operator)).toEqual([
      'mcp.config.oauth_client_invalid',
    ]);
    expect(codes(http({ oauthClient: { ...client, token_endpoint_auth_method: 'private_key_jwt' } }), operator)).toEqual([
      'mcp.config.oauth_client_invalid',
    ]);
  });

  it('client_assertion (private_key_jwt, docs/adr/0083): operator only, oauth2_client only, a closed set of algorithms, bounded fields', () => {
    const jwt = (assertion: Record<string, unknown>, overrides: Record<string, unknown> = {}) =>
      http({
        authScheme: 'oauth2_client',
        credentialRef: 'env:KEY',
        tokenEndpoint: 'https://login.auth.example.com/token',
        clientAssertion: assertion,
        ...overrides,
      });
    const good = { client_id: 'svc-1', alg: 'ES256', audience: 'https://login.auth.example.com/', key_id: 'k1' };
    expect(codes(jwt(good), operator)).toEqual([]);
    expect(codes(jwt({ client_id: 'svc-1', alg: 'EdDSA' }), operator)).toEqual([]);
    expect(codes(jwt(good, { credentialRef: 'secret:KEY' }))).toEqual(['mcp.config.operator_only']);
    expect(codes(jwt(good, { authScheme: 'bearer', tokenEndpoint: null }), operator)).toEqual(['mcp.config.client_assertion_invalid']);
    for (const bad of [
      { ...good, alg: 'HS256' }, // a shared-secret MAC is not a private key signature
      { ...good, alg: 'none' },
      { ...good, audience: 'not a url' },
      { ...good, client_id: '' },
      { ...good, client_id: 'x'.repeat(2049) },
      { ...good, client_id: 'line\nbreak' },
      { ...good, key_id: 'k'.repeat(257) },
      { ...good, private_key: '-----BEGIN PRIVATE KEY-----' }, // never inline: the key is credential_ref's
    ])
      expect(codes(jwt(bad), operator).length).toBeGreaterThan(0);
    expect(codes(jwt({ ...good, alg: 'HS256' }), operator)).toEqual(['mcp.config.client_assertion_invalid']);
  });

  it('oauth2_client without a token endpoint', () => {
    expect(codes(http({ authScheme: 'oauth2_client', credentialRef: 'secret:C' }))).toEqual(['mcp.config.token_endpoint_required']);
  });

  it('oauth2_client whose token endpoint the egress allowlist does not permit', () => {
    expect(
      codes(http({ authScheme: 'oauth2_client', credentialRef: 'secret:C', tokenEndpoint: 'https://evil.example.net/token' })),
    ).toEqual(['mcp.config.token_endpoint_refused']);
    expect(
      codes(http({ authScheme: 'oauth2_client', credentialRef: 'secret:C', tokenEndpoint: 'http://login.auth.example.com/token' })),
    ).toEqual(['mcp.config.token_endpoint_refused']);
    expect(codes(http({ authScheme: 'oauth2_client', credentialRef: 'secret:C', tokenEndpoint: 'https://169.254.169.254/token' }))).toEqual(
      ['mcp.config.token_endpoint_refused'],
    );
    expect(
      codes(
        http({
          authScheme: 'oauth2_client',
          credentialRef: 'secret:C',
          tokenEndpoint: 'https://login.auth.example.com/token',
          tokenScopes: ['mcp:read'],
        }),
      ),
    ).toEqual([]);
  });

  it('a tenant cannot configure a stdio server; the operator can', () => {
    expect(codes(stdio(), tenant)).toEqual(['mcp.config.stdio_operator_only']);
    expect(codes(stdio(), operator)).toEqual([]);
  });

  it('server_id grammar', () => {
    for (const id of ['Acme', '1acme', 'ac-me', 'ac.me', '', 'a'.repeat(33)])
      expect(codes(http({ serverId: id })), id).toEqual(['mcp.config.server_id_invalid']);
    expect(codes(http({ serverId: 'a_1' }))).toEqual([]);
  });

  it('required_scopes only mcp.{server_id}.*', () => {
    expect(codes(http({ requiredScopes: ['mcp.acme.use', 'mcp.acme.admin.write'] }))).toEqual([]);
    expect(codes(http({ requiredScopes: ['session.write'] }))).toEqual(['mcp.config.scope_invalid']);
    expect(codes(http({ requiredScopes: ['mcp.other.use'] }))).toEqual(['mcp.config.scope_invalid']);
    expect(codes(http({ requiredScopes: ['mcp.acme.'] }))).toEqual(['mcp.config.scope_invalid']);
  });

  it('timeouts positive and bounded; output limit positive and bounded', () => {
    expect(codes(http({ timeoutSeconds: 0 }))).toEqual(['mcp.config.timeout_invalid']);
    expect(codes(http({ connectTimeoutSeconds: -1 }))).toEqual(['mcp.config.timeout_invalid']);
    expect(codes(http({ idleTimeoutSeconds: 10_000_000 }))).toEqual(['mcp.config.timeout_invalid']);
    expect(codes(http({ requestTimeoutSeconds: 45, connectTimeoutSeconds: 5, idleTimeoutSeconds: 60 }))).toEqual([]);
    expect(codes(http({ maximumOutputBytes: 0 }))).toEqual(['mcp.config.output_limit_invalid']);
  });

  it('the HTTP endpoint passes the egress policy statically', () => {
    expect(codes(http({ endpoint: 'https://10.0.0.5/mcp' }))).toEqual(['mcp.config.endpoint_refused']);
    expect(codes(http({ endpoint: 'https://other.example.org/mcp' }))).toEqual(['mcp.config.endpoint_refused']);
    expect(codes(http({ endpoint: 'http://mcp.example.com/mcp' }))).toEqual(['mcp.config.endpoint_refused']);
  });

  it('an unknown field is reported with its path', () => {
    const verdict = validateServerConfig(http({ command: 'rm -rf /' }), tenant);
    expect(verdict).toEqual({ ok: false, errors: [expect.objectContaining({ code: 'mcp.config.field_unknown', path: 'command' })] });
  });
});

describe('loadOperatorConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-config-test-'));
  const file = (name: string, body: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof body === 'string' ? body : JSON.stringify(body));
    return path;
  };

  it('reads stdio servers in the column spelling, and the settings', () => {
    const config = loadOperatorConfig(
      file('ok.json', {
        mcp: {
          discovery_reuse_seconds: 120,
          warmup_attempts: 5,
          servers: [
            {
              server_id: 'files',
              transport: 'stdio',
              endpoint: "node 'my server.js' --root /srv",
              auth_scheme: 'env',
              auth_name: 'FILES_TOKEN',
              credential_ref: 'env:FILES_TOKEN',
              side_effect: 'workspace_read',
              risk: 'low',
              idempotency: 'read_only',
            },
          ],
        },
      }),
    );
    expect(config.discoveryReuseSeconds).toBe(120);
    expect(config.warmupAttempts).toBe(5);
    expect(config.warmupRetrySeconds).toBe(10);
    expect(config.servers).toEqual([
      expect.objectContaining({ serverId: 'files', transport: 'stdio', authName: 'FILES_TOKEN', sideEffect: 'workspace_read' }),
    ]);
  });

  it('mcp.sweep_interval_seconds: 30 by default; more than 0 and at most 30 (§ "at most every thirty seconds")', () => {
    expect(loadOperatorConfig(file('sweep-default.json', { mcp: { servers: [] } })).sweepIntervalSeconds).toBe(30);
    expect(loadOperatorConfig(file('sweep-ok.json', { mcp: { sweep_interval_seconds: 0.5 } })).sweepIntervalSeconds).toBe(0.5);
    // biome-ignore lint/correctness/noPrecisionLoss: 1e309 deliberately overflows to Infinity, a non-finite interval to refuse
    for (const value of [0, 31, -1, '5', 1e309]) {
      let error: unknown;
      try {
        loadOperatorConfig(file(`sweep-bad-${String(value)}.json`, { mcp: { sweep_interval_seconds: value } }));
      } catch (e) {
        error = e;
      }
      expect(error, String(value)).toBeInstanceOf(OperatorConfigError);
      expect((error as OperatorConfigError).errors).toEqual([
        expect.objectContaining({ code: 'mcp.config.setting_invalid', path: 'mcp.sweep_interval_seconds' }),
      ]);
    }
  });

  it('refuses an invalid file with every error, code and path in the file’s spelling', () => {
    const path = file('bad.json', {
      mcp: {
        warmup_attempts: 1.5,
        servers: [
          { server_id: 'a', transport: 'stdio', endpoint: 'x', auth_scheme: 'env', auth_name: 'LD_PRELOAD', credential_ref: 'env:X' },
          { server_id: 'a', transport: 'stdio', endpoint: 'x', auth_scheme: 'none' },
          { server_id: 'b', transport: 'stdio', endpoint: 'x', auth_scheme: 'none' },
          { server_id: 'b', transport: 'stdio', endpoint: 'x', auth_scheme: 'none' },
        ],
      },
    });
    let error: unknown;
    try {
      loadOperatorConfig(path);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OperatorConfigError);
    const errors = (error as OperatorConfigError).errors;
    expect(errors).toEqual([
      expect.objectContaining({ code: 'mcp.config.setting_invalid', path: 'mcp.warmup_attempts' }),
      expect.objectContaining({ code: 'mcp.config.auth_name_tier0', path: 'mcp.servers[0].auth_name' }),
      expect.objectContaining({ code: 'mcp.config.server_id_duplicate', path: 'mcp.servers[3].server_id' }),
    ]);
    expect((error as Error).message).toContain('mcp.config.auth_name_tier0 at mcp.servers[0].auth_name');
  });

  it('reads the two egress sections (ADR 0022): strict when absent; operator servers validated against `egress`', () => {
    const none = loadOperatorConfig(file('no-egress.json', { mcp: { servers: [] } }));
    expect(none.egress).toEqual({ allowHosts: [], allowHttp: false, allowPrivateAddresses: false });
    expect(none.tenantEgress).toEqual(none.egress);
    const local = { server_id: 'dev', transport: 'http', endpoint: 'http://127.0.0.1:3000/mcp', auth_scheme: 'none' };
    const relaxed = loadOperatorConfig(
      file('egress.json', {
        mcp: {
          egress: { allow_http: true, allow_private_addresses: true, allow_hosts: ['127.0.0.1', '*.corp.example'] },
          servers: [local],
        },
      }),
    );
    expect(relaxed.egress).toEqual({ allowHosts: ['127.0.0.1', '*.corp.example'], allowHttp: true, allowPrivateAddresses: true });
    // Relaxing the operator's servers leaves the tenants' policy strict.
    expect(relaxed.tenantEgress).toEqual({ allowHosts: [], allowHttp: false, allowPrivateAddresses: false });
    expect(relaxed.servers.map((s) => s.endpoint)).toEqual(['http://127.0.0.1:3000/mcp']);
    // Only the operator's section relaxes the operator's servers.
    expect(() =>
      loadOperatorConfig(
        file('tenant-only.json', { mcp: { tenant_egress: { allow_http: true, allow_private_addresses: true }, servers: [local] } }),
      ),
    ).toThrow(
      expect.objectContaining({
        errors: [expect.objectContaining({ code: 'mcp.config.endpoint_refused', path: 'mcp.servers[0].endpoint' })],
      }),
    );
    // An explicit policy (the CLI's switches) wins over the file's.
    expect(() =>
      loadOperatorConfig(file('egress.json', { mcp: { egress: { allow_http: true, allow_private_addresses: true }, servers: [local] } }), {
        egress: new DefaultEgressPolicy({}),
      }),
    ).toThrow(OperatorConfigError);
  });

  it('refuses a file that is not JSON', () => {
    expect(() => loadOperatorConfig(file('broken.json', '{ nope'))).toThrow(
      expect.objectContaining({ errors: [expect.objectContaining({ code: 'mcp.config.file_not_json' })] }),
    );
  });
});

describe('the tools allow-list and URL-fetching tools (docs/adr/0052)', () => {
  it('an operator server takes tools, url_fetching_tools and allow_url_fetching', () => {
    const verdict = validateServerConfig(
      stdio({
        tools: ['echo', 'gzip-file-as-resource', 'read_resource'],
        urlFetchingTools: ['gzip-file-as-resource'],
        allowUrlFetching: false,
      }),
      operator,
    );
    expect(verdict.ok && verdict.config).toMatchObject({
      tools: ['echo', 'gzip-file-as-resource', 'read_resource'],
      urlFetchingTools: ['gzip-file-as-resource'],
      allowUrlFetching: false,
    });
    // Absent: every tool, as before (and nothing added to the parsed shape).
    const plain = validateServerConfig(stdio(), operator);
    expect(plain.ok && Object.keys(plain.config).filter((k) => /tools|url/i.test(k))).toEqual([]);
  });

  it('a tenant row may not set them: which tools run is the deployment’s decision', () => {
    expect(codes(http({ tools: ['read_item'] }))).toEqual(['mcp.config.operator_only']);
    expect(codes(http({ urlFetchingTools: ['fetch'], allowUrlFetching: true }))).toEqual([
      'mcp.config.operator_only',
      'mcp.config.operator_only',
    ]);
  });

  it.each([
    ['not an array', { tools: 'echo' }, 'tools'],
    ['empty', { tools: [] }, 'tools'],
    ['a name twice', { tools: ['echo', 'echo'] }, 'tools'],
    ['not a tool name', { tools: ['echo x'] }, 'tools.0'],
    ['too long', { tools: ['a'.repeat(129)] }, 'tools.0'],
    ['url_fetching_tools not listed in tools', { tools: ['echo'], urlFetchingTools: ['fetch'] }, 'urlFetchingTools.0'],
    ['allow_url_fetching not a boolean', { allowUrlFetching: 'yes' }, 'allowUrlFetching'],
  ])('%s: mcp.config.tools_invalid at the field', (_, overrides, path) => {
    const verdict = validateServerConfig(stdio(overrides), operator);
    expect(verdict.ok ? [] : verdict.errors.map((e) => [e.code, e.path])).toEqual([['mcp.config.tools_invalid', path]]);
  });

  it('the operator file spells them in snake_case, and names the field of an error in its own spelling', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-tools-test-'));
    const path = join(dir, 'operator.json');
    const server = { server_id: 'local', transport: 'stdio', endpoint: '/usr/bin/node server.js', auth_scheme: 'none' };
    writeFileSync(
      path,
      JSON.stringify({ mcp: { servers: [{ ...server, tools: ['echo'], url_fetching_tools: [], allow_url_fetching: true }] } }),
    );
    expect(loadOperatorConfig(path).servers[0]).toMatchObject({ tools: ['echo'], urlFetchingTools: [], allowUrlFetching: true });
    writeFileSync(path, JSON.stringify({ mcp: { servers: [{ ...server, tools: ['echo'], url_fetching_tools: ['fetch'] }] } }));
    try {
      loadOperatorConfig(path);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(OperatorConfigError);
      expect((error as OperatorConfigError).errors.map((e) => [e.code, e.path])).toEqual([
        ['mcp.config.tools_invalid', 'mcp.servers[0].url_fetching_tools.0'],
      ]);
    }
  });
});

describe('the lookup tool that reconciles UNCERTAIN calls (docs/adr/0066)', () => {
  const lookup = { name: 'find_ticket', keyArgument: 'idempotency_key' };

  it('an operator server with a tools list takes lookup_tool; a tenant row may not', () => {
    const verdict = validateServerConfig(stdio({ tools: ['create_ticket'], lookupTool: lookup }), operator);
    expect(verdict.ok && verdict.config.lookupTool).toEqual(lookup);
    expect(codes(http({ lookupTool: lookup }))).toEqual(['mcp.config.operator_only']);
  });

  it.each([
    ['without a tools list', { lookupTool: lookup }, 'lookupTool'],
    ['a name that is not a tool name', { tools: ['a'], lookupTool: { ...lookup, name: 'find ticket' } }, 'lookupTool.name'],
    [
      'a key argument that is not a property name',
      { tools: ['a'], lookupTool: { ...lookup, keyArgument: 'a.b' } },
      'lookupTool.keyArgument',
    ],
    ['a missing key argument', { tools: ['a'], lookupTool: { name: 'find_ticket' } }, 'lookupTool.keyArgument'],
    ['not an object', { tools: ['a'], lookupTool: 'find_ticket' }, 'lookupTool'],
  ])('%s: mcp.config.lookup_tool_invalid at the field', (_, overrides, path) => {
    const verdict = validateServerConfig(stdio(overrides), operator);
    expect(verdict.ok ? [] : verdict.errors.map((e) => [e.code, e.path])).toEqual([['mcp.config.lookup_tool_invalid', path]]);
  });

  it('an unknown field in it is field_unknown, at its path', () => {
    const verdict = validateServerConfig(stdio({ tools: ['a'], lookupTool: { ...lookup, arguments: { x: 1 } } }), operator);
    expect(verdict.ok ? [] : verdict.errors.map((e) => [e.code, e.path])).toEqual([['mcp.config.field_unknown', 'lookupTool.arguments']]);
  });

  it('the operator file spells it lookup_tool: { name, key_argument }', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-lookup-test-'));
    const path = join(dir, 'operator.json');
    const server = { server_id: 'tickets', transport: 'stdio', endpoint: '/usr/bin/node server.js', auth_scheme: 'none' };
    writeFileSync(
      path,
      JSON.stringify({
        mcp: { servers: [{ ...server, tools: ['create_ticket'], lookup_tool: { name: 'find_ticket', key_argument: 'idempotency_key' } }] },
      }),
    );
    expect(loadOperatorConfig(path).servers[0]).toMatchObject({ lookupTool: lookup });
  });
});
