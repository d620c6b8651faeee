import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { mcpToolName, VeetbotError, type ToolResultItem, type ToolSpec } from '@veetbot/domain';
import type { EventRow, McpServerPreparation, RegistrationRejection } from '@veetbot/ports';
import {
  DefaultEgressPolicy,
  loadOperatorConfig,
  OperatorConfigError,
  validateServerConfig,
  type ConfigError,
  type McpServerConfig,
} from '@veetbot/mcp-adapter';
import { ELICITATION_MODES, OperatorElicitation, type CheckedElicitation, type ElicitationMode } from './mcp-check-elicitation';

/** `mcp check`'s redirect URI: a loopback URL nothing listens on (the check-mode user agent reads the redirect, never dials it). */
export const DEFAULT_REDIRECT_URI = 'http://127.0.0.1:8976/oauth/callback';
export const OAUTH_AUTHORIZE_MODES = ['auto-approve'] as const;

export const MCP_CHECK_USAGE = `veetbot mcp check — connect to one MCP server exactly as the platform would

Usage:
  veetbot mcp check (--url URL | --stdio 'COMMAND ARGS' | --config FILE) [options]

Server:
  --url URL                 a Streamable HTTP server (validated as a tenant row)
  --stdio 'COMMAND ARGS'    a stdio server (validated as operator configuration; no shell)
  --config FILE             an operator configuration file; --server-id picks the server
  --server-id ID            the server id (tool names are mcp.ID.*; default: check)
  --env NAME=VALUE          a literal, non-secret variable for a stdio child (repeatable)
Authentication:
  --auth-scheme none|bearer|header|oauth2_client|env   (default: none)
  --credential-ref REF      env:NAME or file:/absolute/path, resolved by the credential broker
  --auth-name NAME          the header (header) or child variable (env)
  --token-endpoint URL      oauth2_client's token endpoint
  --token-scope SCOPE       oauth2_client scope (repeatable)
  --client-assertion-alg ALG        oauth2_client with private_key_jwt (RFC 7523; docs/adr/0083):
                            the credential is the PEM private key; ALG is RS256|RS384|RS512|
                            PS256|PS384|PS512|ES256|ES384|ES512|EdDSA
  --client-assertion-client-id ID   its client_id (the assertion's iss and sub)
  --client-assertion-audience URL   its aud (default: the token endpoint)
  --client-assertion-key-id KID     its kid header (optional)
Delegated authorization (a server that answers 401 with OAuth resource metadata; docs/adr/0077):
  --oauth-authorize auto-approve   check mode only: follow the authorization URL's redirects
                            to the redirect URI (an authorization server that approves without a
                            person, e.g. a test's). Absent: such a server fails tool.auth_unsupported.
  --oauth-redirect-uri URL  the redirect URI (default: ${DEFAULT_REDIRECT_URI}; never dialled)
  --oauth-client-metadata-url URL   the client ID metadata document (CIMD) used as client_id
  --oauth-client-id ID      a pre-registered client (else CIMD or dynamic registration)
  --oauth-client-secret-ref REF     its secret, by reference (env:NAME or file:/absolute/path)
  --oauth-token-endpoint-auth-method client_secret_basic|client_secret_post|none
Egress:
  --allow-host HOST         restrict to these hosts (repeatable; exact or *.suffix)
  --allow-http              permit plain http (local servers)
  --allow-private           permit loopback and private addresses (local servers)
Classification (default: the most restrictive — external_write, high, non_idempotent):
  --side-effect CLASS  --risk LEVEL  --idempotency CLASS  --required-scope mcp.ID.SCOPE (repeatable)
Timeouts (seconds): --connect-timeout N  --request-timeout N
Call:
  --call REMOTE_TOOL_NAME --args JSON   one call through the full pipeline; repeat the pair for
                            several calls, made in order, one step each, in one run
Elicitation (a server asking the user during a call; docs/adr/0060):
  --elicitation accept-defaults|decline   answer for the operator: accept with the form's
                            defaults (declined when a required field has none), or decline.
                            Absent: the capability is not advertised and a server's request is refused.
Output:
  --json                    one JSON document on stdout (each tool's input schema as registered)

Exit status: 0 when the handshake (and the call, if asked) succeeded; 1 with the reason code
otherwise (mcp.config.*, tool.auth_failed, tool.server_unreachable, …); 2 for a usage error.
`;

/** The command's outcome as one document (`--json` prints exactly this). */
export interface McpCheckReport {
  readonly ok: boolean;
  /** Why it failed: a stable code (mcp.config.*, tool.*, policy.*, cli.*), null on success. */
  readonly reason_code: string | null;
  readonly config_errors: readonly ConfigError[];
  readonly server: {
    readonly server_id: string;
    readonly transport: 'stdio' | 'http';
    readonly status: McpServerPreparation['status'];
    readonly reason_code: string | null;
    /** For failed: egress, DNS or the connection, when the code alone does not say (docs/adr/0056). */
    readonly detail?: string;
    readonly catalog_hash: string | null;
    readonly tool_count: number;
  } | null;
  /** Every registry name the server's tools were mapped to (synthetic read_resource included). */
  readonly tools: readonly {
    readonly remote_name: string | null;
    readonly registry_name: string;
    readonly model_visible: boolean;
    readonly pinned: boolean;
    /** The input schema as registered: what the platform validates calls against and offers models. */
    readonly input_schema: ToolSpec['input_schema'];
  }[];
  /** mcp.tool.rejected: one tool dropped, with the reason. */
  readonly rejected: readonly { readonly remote_name: string; readonly reason: string }[];
  /** mcp.catalog.conflict: names that collided after normalization; every one of them dropped. */
  readonly conflicts: readonly { readonly remote_names: readonly string[] }[];
  /** What the registry refused of the mapped tools (registerDynamic's report). */
  readonly registration_rejected: readonly RegistrationRejection[];
  /** Every form elicitation a server asked during the calls, and how it was answered (--elicitation). */
  readonly elicitations: readonly CheckedElicitation[];
  /** The first call (null without --call); `calls` holds every one, in order. */
  readonly call: McpCheckCall | null;
  readonly calls: readonly McpCheckCall[];
}

export interface McpCheckCall {
  readonly remote_name: string;
  readonly tool_name: string;
  readonly item: ToolResultItem | null;
  readonly pending_approval: boolean;
}

export interface McpCheckIo {
  out(text: string): void;
  err(text: string): void;
}

class UsageError extends VeetbotError {
  constructor(message: string) {
    super('cli.usage', message);
  }
}

const OPTIONS = {
  url: { type: 'string' },
  stdio: { type: 'string' },
  config: { type: 'string' },
  'server-id': { type: 'string' },
  env: { type: 'string', multiple: true },
  'auth-scheme': { type: 'string' },
  'credential-ref': { type: 'string' },
  'auth-name': { type: 'string' },
  'token-endpoint': { type: 'string' },
  'client-assertion-alg': { type: 'string' },
  'client-assertion-client-id': { type: 'string' },
  'client-assertion-audience': { type: 'string' },
  'client-assertion-key-id': { type: 'string' },
  'token-scope': { type: 'string', multiple: true },
  'allow-host': { type: 'string', multiple: true },
  'allow-http': { type: 'boolean', default: false },
  'allow-private': { type: 'boolean', default: false },
  'side-effect': { type: 'string' },
  risk: { type: 'string' },
  idempotency: { type: 'string' },
  'required-scope': { type: 'string', multiple: true },
  'connect-timeout': { type: 'string' },
  'request-timeout': { type: 'string' },
  call: { type: 'string', multiple: true },
  args: { type: 'string', multiple: true },
  elicitation: { type: 'string' },
  'oauth-authorize': { type: 'string' },
  'oauth-redirect-uri': { type: 'string' },
  'oauth-client-metadata-url': { type: 'string' },
  'oauth-client-id': { type: 'string' },
  'oauth-client-secret-ref': { type: 'string' },
  'oauth-token-endpoint-auth-method': { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

type Flags = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: false }>>['values'];

/** `veetbot mcp check …` (argv after `mcp check`). Resolves to the exit status. */
export async function runMcpCheck(argv: readonly string[], io: McpCheckIo): Promise<number> {
  let flags: Flags;
  try {
    flags = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: false, strict: true }).values;
  } catch (error) {
    io.err(`veetbot: cli.usage: ${(error as Error).message}\n\n${MCP_CHECK_USAGE}`);
    return 2;
  }
  if (flags.help) {
    io.out(MCP_CHECK_USAGE);
    return 0;
  }
  let request: CheckRequest;
  try {
    request = readRequest(flags);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`veetbot: ${error.code}: ${error.message}\n`);
    return 2;
  }

  // Interrupted: exiting runs the adapter's exit hook, which kills every stdio server's
  // process group — an operator's Ctrl-C leaves no server behind.
  const interrupted = (signal: NodeJS.Signals) => process.exit(signal === 'SIGINT' ? 130 : 143);
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  let report: McpCheckReport;
  try {
    report = await check(request);
  } catch (error) {
    // A typed failure of the platform's own parts (a store, the runtime) is still one report.
    if (!VeetbotError.isInstance(error)) throw error;
    report = failed(error.code);
  }
  if (flags.json) io.out(`${JSON.stringify(report, null, 2)}\n`);
  else printReport(report, io);
  return report.ok ? 0 : 1;
}

interface CheckRequest {
  /** null: the operator file's own `mcp.egress` section. */
  readonly egress: DefaultEgressPolicy | null;
  /** The configuration as typed (validated in `check`), or the one taken from an operator file. */
  readonly input: Record<string, unknown> | { readonly fromFile: string; readonly serverId: string | undefined };
  readonly source: 'operator' | 'tenant';
  readonly calls: readonly { readonly remoteName: string; readonly arguments: unknown }[];
  readonly elicitation: ElicitationMode | null;
  /** docs/adr/0077: the check-mode delegated authorization, when `--oauth-authorize` was given. */
  readonly oauth: CheckOAuth | null;
}

export interface CheckOAuth {
  readonly redirectUri: string;
  readonly clientMetadataUrl: string | undefined;
}

function readRequest(flags: Flags): CheckRequest {
  const egress = new DefaultEgressPolicy({
    allowHttp: flags['allow-http'],
    allowPrivateAddresses: flags['allow-private'],
    ...(flags['allow-host'] === undefined ? {} : { allowHosts: flags['allow-host'] }),
  });
  const elicitation = flags.elicitation ?? null;
  if (elicitation !== null && !(ELICITATION_MODES as readonly string[]).includes(elicitation))
    throw new UsageError(`--elicitation takes ${ELICITATION_MODES.join(' or ')}.`);
  const oauth = readOAuth(flags);
  const sources = [flags.url, flags.stdio, flags.config].filter((v) => v !== undefined);
  if (sources.length !== 1) throw new UsageError('Give exactly one of --url, --stdio or --config.');

  // `--call` i goes with `--args` i; without any --args every call takes {}.
  const names = flags.call ?? [];
  const texts = flags.args ?? [];
  if (texts.length > 0 && names.length === 0) throw new UsageError('--args goes with --call.');
  if (texts.length > 0 && texts.length !== names.length) throw new UsageError('Give one --args per --call (or none at all).');
  const calls = names.map((remoteName, i) => {
    const text = texts[i];
    if (text === undefined) return { remoteName, arguments: {} as unknown };
    try {
      return { remoteName, arguments: JSON.parse(text) as unknown };
    } catch {
      throw new UsageError('--args is not valid JSON.');
    }
  });

  if (flags.config !== undefined) {
    // An operator file states its own egress policy (`mcp.egress`, ADR 0022): without a switch
    // on the command line the check applies the file's, as the product does.
    const typed = flags['allow-http'] || flags['allow-private'] || flags['allow-host'] !== undefined;
    return {
      egress: typed ? egress : null,
      input: { fromFile: flags.config, serverId: flags['server-id'] },
      source: 'operator',
      calls,
      elicitation: elicitation as ElicitationMode | null,
      oauth,
    };
  }

  const input: Record<string, unknown> = {
    serverId: flags['server-id'] ?? 'check',
    transport: flags.url !== undefined ? 'http' : 'stdio',
    endpoint: flags.url ?? flags.stdio,
    authScheme: flags['auth-scheme'] ?? 'none',
  };
  // Only what was typed: an absent classification takes the schema's most restrictive default.
  const optional: [string, unknown][] = [
    ['authName', flags['auth-name']],
    ['credentialRef', flags['credential-ref']],
    ['tokenEndpoint', flags['token-endpoint']],
    ['tokenScopes', flags['token-scope']],
    ['sideEffect', flags['side-effect']],
    ['risk', flags.risk],
    ['idempotency', flags.idempotency],
    ['requiredScopes', flags['required-scope']],
    ['connectTimeoutSeconds', seconds(flags['connect-timeout'], '--connect-timeout')],
    ['requestTimeoutSeconds', seconds(flags['request-timeout'], '--request-timeout')],
    ['env', environment(flags.env)],
    ['oauthClient', oauthClient(flags)],
    ['clientAssertion', clientAssertion(flags)],
  ];
  for (const [key, value] of optional) if (value !== undefined) input[key] = value;
  // The operator runs this, in the operator's shell: `--credential-ref env:NAME` / `file:` name the
  // operator's own variables and files, which only operator configuration may (ADR 0017; a
  // tenant row names secret:NAME and is checked by the API at write). The egress policy is the
  // same for both origins.
  return { egress, input, source: 'operator', calls, elicitation: elicitation as ElicitationMode | null, oauth };
}

function readOAuth(flags: Flags): CheckOAuth | null {
  const mode = flags['oauth-authorize'];
  if (mode === undefined) {
    if (flags['oauth-redirect-uri'] !== undefined || flags['oauth-client-metadata-url'] !== undefined)
      throw new UsageError('--oauth-redirect-uri and --oauth-client-metadata-url go with --oauth-authorize.');
    return null;
  }
  if (!(OAUTH_AUTHORIZE_MODES as readonly string[]).includes(mode))
    throw new UsageError(`--oauth-authorize takes ${OAUTH_AUTHORIZE_MODES.join(' or ')}.`);
  const redirectUri = flags['oauth-redirect-uri'] ?? DEFAULT_REDIRECT_URI;
  const metadataUrl = flags['oauth-client-metadata-url'];
  if (!isUrl(redirectUri)) throw new UsageError('--oauth-redirect-uri takes an absolute URL.');
  if (metadataUrl !== undefined && !(isUrl(metadataUrl) && new URL(metadataUrl).protocol === 'https:'))
    throw new UsageError('--oauth-client-metadata-url takes an https URL.');
  return { redirectUri, clientMetadataUrl: metadataUrl };
}

function isUrl(text: string): boolean {
  try {
    new URL(text);
    return true;
  } catch {
    return false;
  }
}

/** The pre-registered client as the configuration's oauth_client (validated with the rest). */
function oauthClient(flags: Flags): Record<string, unknown> | undefined {
  const clientId = flags['oauth-client-id'];
  if (clientId === undefined) {
    if (flags['oauth-client-secret-ref'] !== undefined || flags['oauth-token-endpoint-auth-method'] !== undefined)
      throw new UsageError('--oauth-client-secret-ref and --oauth-token-endpoint-auth-method go with --oauth-client-id.');
    return undefined;
  }
  return {
    clientId,
    clientSecretRef: flags['oauth-client-secret-ref'] ?? null,
    ...(flags['oauth-token-endpoint-auth-method'] === undefined
      ? {}
      : { tokenEndpointAuthMethod: flags['oauth-token-endpoint-auth-method'] }),
  };
}

/** oauth2_client's private_key_jwt as the configuration's client_assertion (validated with the rest; docs/adr/0083). */
function clientAssertion(flags: Flags): Record<string, unknown> | undefined {
  const alg = flags['client-assertion-alg'];
  const clientId = flags['client-assertion-client-id'];
  if (alg === undefined && clientId === undefined) {
    if (flags['client-assertion-audience'] !== undefined || flags['client-assertion-key-id'] !== undefined)
      throw new UsageError('--client-assertion-audience and --client-assertion-key-id go with --client-assertion-alg.');
    return undefined;
  }
  if (alg === undefined || clientId === undefined)
    throw new UsageError('--client-assertion-alg and --client-assertion-client-id go together.');
  return {
    clientId,
    alg,
    ...(flags['client-assertion-audience'] === undefined ? {} : { audience: flags['client-assertion-audience'] }),
    ...(flags['client-assertion-key-id'] === undefined ? {} : { keyId: flags['client-assertion-key-id'] }),
  };
}

function seconds(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`${flag} takes a positive number of seconds.`);
  return n;
}

function environment(pairs: readonly string[] | undefined): Record<string, string> | undefined {
  if (pairs === undefined) return undefined;
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError('--env takes NAME=VALUE.');
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

const EMPTY = {
  config_errors: [],
  server: null,
  tools: [],
  rejected: [],
  conflicts: [],
  registration_rejected: [],
  elicitations: [],
  call: null,
  calls: [],
} as const;

function failed(reasonCode: string, over: Partial<McpCheckReport> = {}): McpCheckReport {
  return { ...EMPTY, ok: false, reason_code: reasonCode, ...over };
}

function resolveConfig(
  request: CheckRequest,
): { ok: true; config: McpServerConfig; egress: DefaultEgressPolicy } | { ok: false; errors: ConfigError[] } {
  const { input } = request;
  if ('fromFile' in input) {
    let servers: readonly McpServerConfig[];
    let egress: DefaultEgressPolicy;
    try {
      const loaded = loadOperatorConfig(input.fromFile as string, request.egress === null ? {} : { egress: request.egress });
      servers = loaded.servers;
      egress = request.egress ?? new DefaultEgressPolicy(loaded.egress);
    } catch (error) {
      if (error instanceof OperatorConfigError) return { ok: false, errors: [...error.errors] };
      throw error;
    }
    const wanted = input.serverId as string | undefined;
    const chosen = wanted === undefined ? (servers.length === 1 ? servers[0] : undefined) : servers.find((s) => s.serverId === wanted);
    if (chosen === undefined) {
      const message =
        wanted === undefined
          ? `The file configures ${servers.length} servers; name one with --server-id.`
          : `The file configures no server ${wanted}.`;
      return { ok: false, errors: [{ code: 'mcp.config.server_not_found', path: 'mcp.servers', message }] };
    }
    return { ok: true, config: chosen, egress };
  }
  const egress = request.egress ?? new DefaultEgressPolicy({});
  const verdict = validateServerConfig(input, { source: request.source, egress });
  return verdict.ok ? { ok: true, config: verdict.config, egress } : verdict;
}

async function check(request: CheckRequest): Promise<McpCheckReport> {
  // Gate 14: validated as written, before anything is dialled.
  const verdict = resolveConfig(request);
  if (!verdict.ok) return failed(verdict.errors[0]?.code ?? 'mcp.config.invalid', { config_errors: verdict.errors });
  const config = verdict.config;

  // Loaded only once there is something to dial: a refused configuration never starts a database.
  const { composeMcpCheck } = await import('./mcp-check-compose');
  const answerer = request.elicitation === null ? null : new OperatorElicitation(request.elicitation);
  const scene = await composeMcpCheck(config, verdict.egress, answerer ?? undefined, request.oauth ?? undefined);
  try {
    const { runtime, stores, tenantId, principal } = scene;
    const opened = await runtime.openSessionWithReport(tenantId, principal, scene.agent, scene.environment);
    const preparation = opened.mcp?.servers.find((s) => s.serverId === config.serverId) ?? null;
    const events = await stores.events.listAfter(tenantId, null, 0, 10_000);
    const catalog =
      preparation?.catalogHash == null ? [] : await stores.mcpCatalog.getGeneration(tenantId, config.serverId, preparation.catalogHash);
    const remoteOf = new Map(catalog.map((row) => [row.registryName, row.remoteName]));
    const pinned = new Set(opened.session.toolNames);
    const ours = (spec: Pick<ToolSpec, 'source' | 'server_id'>) => spec.source === 'mcp' && spec.server_id === config.serverId;
    const specs = new Map<string, ToolSpec>();
    for (const spec of opened.session.specs) if (ours(spec)) specs.set(spec.name, spec);
    for (const spec of scene.registry.list()) if (ours(spec) && !specs.has(spec.name)) specs.set(spec.name, spec);

    const report: Omit<McpCheckReport, 'ok' | 'reason_code' | 'call' | 'calls' | 'elicitations'> = {
      config_errors: [],
      server:
        preparation === null
          ? null
          : {
              server_id: preparation.serverId,
              transport: preparation.transport,
              status: preparation.status,
              reason_code: preparation.reasonCode,
              ...(preparation.detail === undefined ? {} : { detail: preparation.detail }),
              catalog_hash: preparation.catalogHash,
              tool_count: preparation.toolCount,
            },
      tools: [...specs.values()]
        .map((spec) => ({
          remote_name: remoteOf.get(spec.name) ?? null,
          registry_name: spec.name,
          model_visible: spec.model_visible,
          pinned: pinned.has(spec.name),
          input_schema: spec.input_schema,
        }))
        .sort((a, b) => (a.registry_name < b.registry_name ? -1 : a.registry_name > b.registry_name ? 1 : 0)),
      rejected: ofServer(events, 'mcp.tool.rejected', config.serverId).map((p) => ({
        remote_name: String(p.remote_name),
        reason: String(p.reason),
      })),
      conflicts: ofServer(events, 'mcp.catalog.conflict', config.serverId).map((p) => ({
        remote_names: (p.remote_names as unknown[]).map(String),
      })),
      registration_rejected: opened.mcp?.registration.rejected ?? [],
    };
    if (preparation === null || preparation.status === 'failed') {
      return {
        ...report,
        ok: false,
        reason_code: preparation?.reasonCode ?? 'tool.server_unreachable',
        elicitations: [],
        call: null,
        calls: [],
      };
    }
    if (request.calls.length === 0) return { ...report, ok: true, reason_code: null, elicitations: [], call: null, calls: [] };

    // The calls in one fresh run of the session, one Runtime.submitStep each: steps 1–14, recorded.
    const run = await runtime.createRun(tenantId, opened.session.id, {
      deadlineAt: new Date(Date.now() + 10 * 60_000),
      budgets: { maximumToolCalls: request.calls.length },
    });
    const calls: McpCheckCall[] = [];
    let reasonCode: string | null = null;
    for (const [index, wanted] of request.calls.entries()) {
      const { remoteName } = wanted;
      const toolName = catalog.find((row) => row.remoteName === remoteName)?.registryName ?? mcpToolName(config.serverId, remoteName);
      const outcome = await runtime.submitStep({
        tenantId,
        runId: run.id,
        stepNumber: index + 1,
        principal,
        // The operator typed these arguments: USER content, a model-shaped call.
        calls: [{ callId: `check_${randomUUID()}`, toolName, arguments: wanted.arguments, contextTrust: ['user'], origin: 'model' }],
      });
      const item = outcome.items[0] ?? null;
      const pending = item === null && outcome.pendingApprovals.length > 0;
      calls.push({ remote_name: remoteName, tool_name: toolName, item, pending_approval: pending });
      // The first failure is the command's reason; the later calls are still made.
      if (reasonCode === null) {
        if (item === null) reasonCode = pending ? 'policy.approval_required' : 'cli.call_not_concluded';
        else if (item.outcome.status !== 'succeeded') reasonCode = item.outcome.reason_code;
      }
    }
    const elicitations = answerer?.asked ?? [];
    return { ...report, ok: reasonCode === null, reason_code: reasonCode, elicitations, call: calls[0] ?? null, calls };
  } finally {
    await scene.close();
  }
}

function ofServer(events: readonly EventRow[], type: string, serverId: string): Record<string, unknown>[] {
  return events
    .filter((e) => e.type === type && (e.payload as { server?: unknown }).server === serverId)
    .map((e) => e.payload as Record<string, unknown>);
}

function printReport(report: McpCheckReport, io: McpCheckIo): void {
  const lines: string[] = [];
  for (const e of report.config_errors) lines.push(`config error  ${e.code} at ${e.path || '(root)'}: ${e.message}`);
  const server = report.server;
  if (server !== null) {
    lines.push(`server        ${server.server_id} (${server.transport})`);
    lines.push(`status        ${server.status}${server.reason_code === null ? '' : ` ${server.reason_code}`}`);
    if (server.detail !== undefined) lines.push(`detail        ${server.detail}`);
    lines.push(`catalog_hash  ${server.catalog_hash ?? '-'}`);
    lines.push(`tools         ${report.tools.length} mapped, ${report.rejected.length} rejected, ${report.conflicts.length} conflicts`);
  }
  if (report.tools.length > 0) {
    const rows = report.tools.map((t) => [
      t.remote_name ?? '(synthetic)',
      t.registry_name,
      t.model_visible ? 'model_visible' : 'application_only',
      t.pinned ? 'pinned' : 'not pinned',
    ]);
    const header = ['remote_name', 'registry_name', 'visibility', 'session'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    lines.push('');
    for (const row of [header, ...rows])
      lines.push(
        row
          .map((c, i) => c.padEnd(widths[i]!))
          .join('  ')
          .trimEnd(),
      );
  }
  for (const r of report.rejected) lines.push(`rejected      ${r.remote_name}: ${r.reason}`);
  for (const c of report.conflicts) lines.push(`conflict      ${c.remote_names.join(', ')} (all dropped)`);
  for (const r of report.registration_rejected) lines.push(`registry      ${JSON.stringify(r)}`);
  for (const e of report.elicitations)
    lines.push(`elicitation   ${e.tool_name} asked for ${e.fields.join(', ') || '(nothing)'}: ${e.action}`);
  for (const call of report.calls) {
    lines.push('', `call          ${call.remote_name} -> ${call.tool_name}`);
    lines.push(call.item === null ? '(no result item: the call did not conclude)' : JSON.stringify(call.item, null, 2));
  }
  io.out(`${lines.join('\n')}\n`);
  if (report.ok) io.out('ok\n');
  else io.err(`veetbot: mcp check failed: ${report.reason_code}\n`);
}
