// The client the MCP conformance suite runs (docs/adr/0059): `node conformance-client.mjs URL`,
// with the scenario in MCP_CONFORMANCE_SCENARIO and its context in MCP_CONFORMANCE_CONTEXT. It is
// the operator command itself — `veetbot mcp check`, the built CLI (apps/cli/dist/main.mjs), as
// a real process — with the calls each scenario asks for; nothing of the adapter is stubbed.
//
//   - a scenario whose context names tool calls (`toolCalls`): exactly those (null arguments left
//     out, as the schema-following caller the platform's validation requires: withoutNulls);
//   - the scenarios that name their tool in prose: that tool;
//   - json-schema-2020-12-preservation: the focal tool's input schema as registered, round-tripped
//     through the echo tool (the suite compares it with what it sent);
//   - any other non-OAuth scenario: discovery, then one call of every tool the check registered,
//     with arguments made from its schema (a tool the adapter excluded is never called);
//   - auth/* (the delegated authorization flow, docs/adr/0077): one check that discovers and
//     calls test-tool, with `--oauth-authorize auto-approve` (the suite's authorization server
//     approves without a person) and a client ID metadata document URL; a pre-registered
//     client's secret (pre-registration's context) goes by reference, an env: variable.
//   - auth/client-credentials-* (docs/adr/0083): the oauth2_client scheme, which names its token
//     endpoint in configuration and never discovers it (§ Authentication rule 4). The scenario's
//     context names no endpoint, so this harness plays the operator reading a vendor's docs: it
//     reads the token endpoint (and the issuer, the private_key_jwt assertion's audience) from
//     the scenario's authorization server metadata, found through the server's RFC 9728
//     resource metadata, and passes them to `mcp check` explicitly with the credential by
//     reference — `client_id:client_secret` (client_secret_basic) or the PEM private key with
//     `--client-assertion-*` (private_key_jwt, the alg the context names).
// Every check answers a server's form elicitation with the form's defaults (`--elicitation
// accept-defaults`, docs/adr/0060): the operator's answer, as the SEP-1034 and SEP-2322 scenarios
// expect of a client that supports elicitation.
// Exit status: the CLI's.
import { execFile } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = join(REPO, 'apps/cli/dist/main.mjs');
const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');

/** Read-only and low risk, so the default policy lets every call through without an approval. */
const BASE = [
  'mcp',
  'check',
  '--url',
  url,
  '--allow-http',
  '--allow-private',
  '--server-id',
  'conformance',
  '--side-effect',
  'none',
  '--risk',
  'low',
  '--idempotency',
  'read_only',
  '--request-timeout',
  '15',
  '--elicitation',
  'accept-defaults',
  '--json',
];

/** docs/adr/0077: the CIMD URL (the suite's authorization server never fetches it). */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
const SECRET_VARIABLE = 'VEETBOT_CONFORMANCE_CLIENT_SECRET';

function oauthArgs() {
  const args = ['--oauth-authorize', 'auto-approve', '--oauth-client-metadata-url', CLIENT_METADATA_URL];
  if (typeof context.client_id === 'string' && scenario === 'auth/pre-registration') {
    args.push('--oauth-client-id', context.client_id);
    if (typeof context.client_secret === 'string') args.push('--oauth-client-secret-ref', `env:${SECRET_VARIABLE}`);
  }
  return args;
}

/** The operator's reading of the scenario's documents: the authorization server metadata. */
async function authorizationServerMetadata() {
  const probe = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: '{}',
  });
  const challenge = probe.headers.get('www-authenticate') ?? '';
  const target = new URL(url);
  const prmUrl =
    /resource_metadata="([^"]+)"/.exec(challenge)?.[1] ?? `${target.origin}/.well-known/oauth-protected-resource${target.pathname}`;
  const prm = await (await fetch(prmUrl)).json();
  const issuer = new URL(prm.authorization_servers[0]);
  const path = issuer.pathname === '/' ? '' : issuer.pathname;
  return (await fetch(`${issuer.origin}/.well-known/oauth-authorization-server${path}`)).json();
}

async function clientCredentialsArgs() {
  const metadata = await authorizationServerMetadata();
  const args = [
    '--auth-scheme',
    'oauth2_client',
    '--credential-ref',
    `env:${SECRET_VARIABLE}`,
    '--token-endpoint',
    metadata.token_endpoint,
  ];
  if (typeof context.private_key_pem === 'string') {
    const alg = context.signing_algorithm ?? metadata.token_endpoint_auth_signing_alg_values_supported?.[0];
    args.push(
      '--client-assertion-alg',
      alg,
      '--client-assertion-client-id',
      context.client_id,
      '--client-assertion-audience',
      metadata.issuer,
    );
  }
  return args;
}

/** The credential the reference names, by scenario: a pre-registered secret, a client id and secret, a private key. */
function credentialValue() {
  if (scenario.startsWith('auth/client-credentials')) {
    if (typeof context.private_key_pem === 'string') return context.private_key_pem;
    return `${context.client_id}:${context.client_secret}`;
  }
  return typeof context.client_secret === 'string' ? context.client_secret : undefined;
}

async function check(calls) {
  const args = [
    ...BASE,
    ...(scenario.startsWith('auth/client-credentials') ? await clientCredentialsArgs() : scenario.startsWith('auth/') ? oauthArgs() : []),
  ];
  for (const call of calls) args.push('--call', call.name, '--args', JSON.stringify(call.arguments ?? {}));
  return new Promise((done) => {
    const env = { ...process.env };
    const credential = credentialValue();
    if (credential !== undefined) env[SECRET_VARIABLE] = credential;
    execFile(process.execPath, [CLI, ...args], { maxBuffer: 16 * 1024 * 1024, env }, (error, stdout, stderr) => {
      process.stderr.write(stderr);
      let report = null;
      try {
        report = JSON.parse(stdout);
      } catch {
        process.stderr.write(stdout);
      }
      done({ code: error === null ? 0 : (error.code ?? 1), report });
    });
  });
}

/** Arguments a schema accepts: every required property, from its default, const, enum or type. */
function argumentsFor(schema) {
  const out = {};
  for (const name of schema?.required ?? []) {
    const p = schema.properties?.[name] ?? {};
    const type = Array.isArray(p.type) ? p.type[0] : p.type;
    out[name] =
      p.default ??
      p.const ??
      p.enum?.[0] ??
      (type === 'integer' || type === 'number'
        ? 1
        : type === 'boolean'
          ? true
          : type === 'object'
            ? {}
            : type === 'array'
              ? []
              : type === 'null'
                ? null
                : 'x');
  }
  return out;
}

const NAMED = {
  tools_call: [{ name: 'add_numbers', arguments: { a: 5, b: 3 } }],
  'sse-retry': [{ name: 'test_reconnection', arguments: {} }],
  'elicitation-sep1034-client-defaults': [{ name: 'test_client_elicitation_defaults', arguments: {} }],
  // Its four tools, in one check (one boot, not a discovery check and then a calling one).
  'sep-2322-client-request-state': ['test_mrtr_echo_state', 'test_mrtr_no_state', 'test_mrtr_unrelated', 'test_mrtr_no_result_type'].map(
    (name) => ({ name, arguments: {} }),
  ),
};

/**
 * A scenario's call as a caller that follows the tool's schema makes it: an argument given as
 * null is left out. The platform validates every call against the schema (§ Argument
 * validation), and a property SEP-2243 mirrors into a header has one type — string, integer or
 * boolean — which null never matches; "null or not provided" (http-custom-headers'
 * omit-null check) reaches a server through the platform only as "not provided" (docs/adr/0064).
 */
function withoutNulls(call) {
  const args = Object.fromEntries(Object.entries(call.arguments ?? {}).filter(([, value]) => value !== null));
  return { ...call, arguments: args };
}

let result;
if (scenario.startsWith('auth/') && !scenario.startsWith('auth/cross-app')) result = await check([{ name: 'test-tool', arguments: {} }]);
else if (Array.isArray(context.toolCalls)) result = await check(context.toolCalls.map(withoutNulls));
else if (NAMED[scenario] !== undefined) result = await check(NAMED[scenario]);
else {
  result = await check([]);
  const tools = (result.report?.tools ?? []).filter((t) => t.remote_name !== null);
  if (result.code === 0 && !scenario.startsWith('auth/') && tools.length > 0) {
    if (scenario === 'json-schema-2020-12-preservation') {
      const focal = tools.find((t) => t.remote_name !== 'echo_schema' && !/echo/.test(t.remote_name));
      const echo = tools.find((t) => t !== focal);
      if (focal !== undefined && echo !== undefined)
        result = await check([{ name: echo.remote_name, arguments: { schema: focal.input_schema } }]);
    } else {
      result = await check(tools.map((t) => ({ name: t.remote_name, arguments: argumentsFor(t.input_schema) })));
    }
  }
}
process.stdout.write(`${JSON.stringify(result.report)}\n`);
process.exit(result.code);
