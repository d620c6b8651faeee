import {
  CREDENTIAL_REF_KINDS,
  isTier0EnvironmentName,
  isValidServerId,
  parseCredentialRef,
  SERVER_ID_MAX_LENGTH,
  SERVER_ID_PATTERN,
} from '@veetbot/domain';
import type { EgressPolicy } from '@veetbot/ports';
import { McpServerConfig } from './server-config';
import { stdioCommand } from './command-line';
import { checkStdioEnvironment } from './stdio-environment';

export interface ConfigError {
  /** Stable: `mcp.config.*`. */
  readonly code: string;
  /** The field, in the input's spelling (`authName`, `requiredScopes.0`). */
  readonly path: string;
  readonly message: string;
}

export type ConfigValidation =
  | { readonly ok: true; readonly config: McpServerConfig }
  | { readonly ok: false; readonly errors: ConfigError[] };

export interface ConfigValidationContext {
  /** Who writes the row: operator configuration, or a tenant (stdio is operator-only). */
  readonly source: 'operator' | 'tenant';
  /** The same policy that will check the server's endpoint when it is dialled (rule 4). */
  readonly egress: EgressPolicy;
}

/**
 * ADR 0017: `mcp.servers.write` is the scope that changes MCP configuration, so no server may
 * be called `servers` (its tools would require scopes `mcp.servers.*`, and a key granted them
 * would gain the configuration scope too).
 */
export const RESERVED_SERVER_IDS: ReadonlySet<string> = new Set(['servers']);

/** § Authentication rule 2. */
export const AUTH_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Headers a header scheme's credential may not be presented as (docs/adr/0064): the credential
 * is written after the transport's own headers and would replace them — HTTP framing and
 * routing, the MCP transport's per-request headers, and SEP-2243's `Mcp-Param-*` namespace,
 * where it would stand in for (or be sent beside) a tool argument.
 */
const RESERVED_AUTH_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'accept',
  'proxy-authorization',
  'proxy-connection',
  'mcp-session-id',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'last-event-id',
  'idempotency-key',
  'traceparent',
  'tracestate',
  'baggage',
]);

export function isReservedAuthHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED_AUTH_HEADERS.has(lower) || lower.startsWith('mcp-param-');
}

// Which shape failure gets which stable code: the field decides.
const FIELD_CODES: Record<string, string> = {
  serverId: 'mcp.config.server_id_invalid',
  transport: 'mcp.config.transport_unknown',
  authScheme: 'mcp.config.auth_scheme_unknown',
  endpoint: 'mcp.config.endpoint_invalid',
  timeoutSeconds: 'mcp.config.timeout_invalid',
  connectTimeoutSeconds: 'mcp.config.timeout_invalid',
  requestTimeoutSeconds: 'mcp.config.timeout_invalid',
  idleTimeoutSeconds: 'mcp.config.timeout_invalid',
  maximumOutputBytes: 'mcp.config.output_limit_invalid',
  requiredScopes: 'mcp.config.scope_invalid',
  sideEffect: 'mcp.config.classification_invalid',
  risk: 'mcp.config.classification_invalid',
  idempotency: 'mcp.config.classification_invalid',
  env: 'mcp.config.env_invalid',
  tools: 'mcp.config.tools_invalid',
  urlFetchingTools: 'mcp.config.tools_invalid',
  allowUrlFetching: 'mcp.config.tools_invalid',
  lookupTool: 'mcp.config.lookup_tool_invalid',
  oauthClient: 'mcp.config.oauth_client_invalid',
  clientAssertion: 'mcp.config.client_assertion_invalid',
};

/**
 * § Authentication: "Configuration is validated when it is written, not when it is dialled."
 * Gate 14: every rule is mechanical — no server is contacted and no broker is asked for a
 * value; the only outside question is the egress policy's static check of a URL. Returns every
 * error found, each with a stable `mcp.config.*` code and the field it concerns.
 */
export function validateServerConfig(input: unknown, context: ConfigValidationContext): ConfigValidation {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, errors: [{ code: 'mcp.config.not_object', path: '', message: 'A server configuration must be a JSON object.' }] };
  }
  const parsed = McpServerConfig.safeParse(input);
  if (!parsed.success) {
    const errors: ConfigError[] = [];
    for (const issue of parsed.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys)
          errors.push({
            code: 'mcp.config.field_unknown',
            path: [...issue.path, key].join('.'),
            message: 'This field is not part of a server configuration.',
          });
        continue;
      }
      const field = String(issue.path[0] ?? '');
      errors.push({
        code: FIELD_CODES[field] ?? 'mcp.config.field_invalid',
        path: issue.path.join('.'),
        message: describeIssue(field, issue.message),
      });
    }
    return { ok: false, errors };
  }
  const config = parsed.data;
  const errors = checkRules(config, context);
  return errors.length === 0 ? { ok: true, config } : { ok: false, errors };
}

function describeIssue(field: string, zodMessage: string): string {
  switch (field) {
    case 'authScheme':
      return 'auth_scheme must be one of none, bearer, header, oauth2_client, env.';
    case 'transport':
      return 'transport must be stdio or http.';
    default:
      return zodMessage;
  }
}

function checkRules(config: McpServerConfig, context: ConfigValidationContext): ConfigError[] {
  const errors: ConfigError[] = [];
  const error = (code: string, path: string, message: string) => errors.push({ code, path, message });
  const { authScheme: scheme, transport } = config;

  // § MCP: server_id is the name used in tool names.
  if (!isValidServerId(config.serverId)) {
    error(
      'mcp.config.server_id_invalid',
      'serverId',
      `server_id must match ${SERVER_ID_PATTERN} and be at most ${SERVER_ID_MAX_LENGTH} characters.`,
    );
  } else if (RESERVED_SERVER_IDS.has(config.serverId)) {
    error(
      'mcp.config.server_id_reserved',
      'serverId',
      `server_id ${config.serverId} is reserved: its tools' scopes (mcp.${config.serverId}.*) would be the API's configuration scopes.`,
    );
  }

  // § Where a server may live: a tenant that could name a stdio command would have remote
  // code execution in the worker's trust zone.
  if (transport === 'stdio' && context.source === 'tenant') {
    error('mcp.config.stdio_operator_only', 'transport', 'stdio servers are configured by the operator only; tenant servers are HTTP.');
  }

  // docs/adr/0052: which tools run, and which may fetch URLs, is the deployment's decision (a
  // tenant's row has no such columns, and a tenant server runs off the worker's host anyway).
  if (context.source === 'tenant') {
    for (const field of ['tools', 'urlFetchingTools', 'allowUrlFetching', 'lookupTool', 'oauthClient', 'clientAssertion'] as const)
      if (config[field] !== undefined)
        error('mcp.config.operator_only', field, `${field} is set in the operator configuration only (operator.json).`);
  } else if (config.lookupTool !== undefined && config.tools === undefined) {
    // docs/adr/0066: the reconciled calls are the listed tools' (the sweep asks for them by name).
    error('mcp.config.lookup_tool_invalid', 'lookupTool', "lookup_tool needs a tools list: the calls it reconciles are those tools'.");
  } else if (config.urlFetchingTools !== undefined && config.tools !== undefined) {
    for (const [i, name] of config.urlFetchingTools.entries())
      if (!config.tools.includes(name))
        error(
          'mcp.config.tools_invalid',
          `urlFetchingTools.${i}`,
          `url_fetching_tools names ${name}, which tools does not list (a tool not listed is never offered).`,
        );
  }

  // docs/adr/0077: the pre-registered client serves the delegated flow of an HTTP server with no
  // credential of its own; its secret is a reference (checked like credential_ref), or absent
  // for a public client (token_endpoint_auth_method none).
  const oauthClient = config.oauthClient;
  if (oauthClient !== undefined && context.source === 'operator') {
    if (transport !== 'http' || scheme !== 'none')
      error(
        'mcp.config.oauth_client_invalid',
        'oauthClient',
        'oauth_client is for an http server with auth_scheme none (the delegated flow).',
      );
    const isPublic = oauthClient.tokenEndpointAuthMethod === 'none';
    if (isPublic && oauthClient.clientSecretRef !== null)
      error(
        'mcp.config.oauth_client_invalid',
        'oauthClient.clientSecretRef',
        'A public client (token_endpoint_auth_method none) has no secret.',
      );
    if (!isPublic && oauthClient.tokenEndpointAuthMethod !== undefined && oauthClient.clientSecretRef === null)
      error(
        'mcp.config.oauth_client_invalid',
        'oauthClient.clientSecretRef',
        `token_endpoint_auth_method ${oauthClient.tokenEndpointAuthMethod} needs client_secret_ref.`,
      );
    if (oauthClient.clientSecretRef !== null) {
      const ref = parseCredentialRef(oauthClient.clientSecretRef);
      if (ref === null || !CREDENTIAL_REF_KINDS.operator.includes(ref.kind))
        error(
          'mcp.config.credential_ref_invalid',
          'oauthClient.clientSecretRef',
          'client_secret_ref must be a reference (env:NAME or file:/absolute/path), never a value.',
        );
    }
  }

  // docs/adr/0083: private_key_jwt is a form of oauth2_client's client authentication (its
  // credential_ref resolves to the private key); it means nothing for any other scheme.
  if (config.clientAssertion !== undefined && context.source === 'operator' && scheme !== 'oauth2_client')
    error('mcp.config.client_assertion_invalid', 'clientAssertion', 'client_assertion is for auth_scheme oauth2_client (private_key_jwt).');

  // Rule 1: none takes no reference; every other scheme requires one.
  if (scheme === 'none' && config.credentialRef !== null) {
    error('mcp.config.credential_ref_forbidden', 'credentialRef', 'auth_scheme none requires a null credential_ref.');
  }
  if (scheme !== 'none' && config.credentialRef === null) {
    error('mcp.config.credential_ref_required', 'credentialRef', `auth_scheme ${scheme} requires a credential_ref.`);
  }
  // ADR 0017: which kinds of reference a server may use depends on who configured it. A tenant
  // names only its own secrets (secret:NAME); env: and file: reach the operator's environment
  // and files, so they are the operator's alone. Messages never repeat the submitted text: a
  // value that is not a reference may be a secret pasted where a reference belongs.
  if (config.credentialRef !== null) {
    const ref = parseCredentialRef(config.credentialRef);
    const allowed = CREDENTIAL_REF_KINDS[context.source];
    const spelled = allowed
      .map((kind) => (kind === 'secret' ? 'secret:NAME' : kind === 'env' ? 'env:NAME' : 'file:/absolute/path'))
      .join(' or ');
    if (ref === null) {
      error(
        context.source === 'tenant' ? 'mcp.config.credential_ref_not_allowed' : 'mcp.config.credential_ref_invalid',
        'credentialRef',
        `credential_ref must be a reference (${spelled}), never a value.`,
      );
    } else if (!allowed.includes(ref.kind)) {
      error(
        'mcp.config.credential_ref_not_allowed',
        'credentialRef',
        `A ${context.source} server's credential_ref must be ${spelled}; ${ref.kind}: references are for ${context.source === 'tenant' ? 'the operator configuration' : 'tenant servers'} only.`,
      );
    }
  }

  // Rule 2 (and 3): header and env need a name; a header scheme may not write Authorization;
  // an env scheme may not name a tier-0 variable — read from the one list in the domain.
  if (scheme === 'header' || scheme === 'env') {
    if (config.authName === null) {
      error('mcp.config.auth_name_required', 'authName', `auth_scheme ${scheme} requires auth_name.`);
    } else if (!AUTH_NAME_PATTERN.test(config.authName)) {
      error('mcp.config.auth_name_invalid', 'authName', 'auth_name must match ^[A-Za-z0-9_-]{1,64}$.');
    } else if (scheme === 'header' && config.authName.toLowerCase() === 'authorization') {
      error('mcp.config.auth_name_authorization', 'authName', 'A header scheme may not name Authorization; use the bearer scheme.');
    } else if (scheme === 'header' && isReservedAuthHeader(config.authName)) {
      error('mcp.config.auth_name_reserved', 'authName', 'A header scheme may not name a header the HTTP transport or MCP sets itself.');
    } else if (scheme === 'env' && isTier0EnvironmentName(config.authName)) {
      error('mcp.config.auth_name_tier0', 'authName', 'An env scheme may not name a tier-0 environment variable.');
    }
  } else if (config.authName !== null) {
    error('mcp.config.auth_name_unexpected', 'authName', `auth_scheme ${scheme} takes no auth_name.`);
  }

  // Rule 4: the token endpoint, checked by the resolver that checks the server's endpoint.
  if (scheme === 'oauth2_client') {
    if (config.tokenEndpoint === null) {
      error('mcp.config.token_endpoint_required', 'tokenEndpoint', 'auth_scheme oauth2_client requires token_endpoint.');
    } else {
      const verdict = context.egress.checkStatic(config.tokenEndpoint);
      if (!verdict.allowed)
        error(
          'mcp.config.token_endpoint_refused',
          'tokenEndpoint',
          `The egress policy does not permit the token endpoint (${verdict.code}).`,
        );
    }
  } else {
    if (config.tokenEndpoint !== null)
      error('mcp.config.token_endpoint_unexpected', 'tokenEndpoint', 'token_endpoint is for oauth2_client only.');
    if (config.tokenScopes !== null)
      error('mcp.config.token_endpoint_unexpected', 'tokenScopes', 'token_scopes is for oauth2_client only.');
  }

  // Rule 5: no header on a pipe and no child environment on a socket.
  if (transport === 'http' && scheme === 'env') {
    error('mcp.config.auth_scheme_transport', 'authScheme', 'auth_scheme env is for stdio servers only.');
  }
  if (transport === 'stdio' && (scheme === 'bearer' || scheme === 'header' || scheme === 'oauth2_client')) {
    error('mcp.config.auth_scheme_transport', 'authScheme', `auth_scheme ${scheme} is for HTTP servers only.`);
  }

  // The endpoint itself: a URL the egress policy permits, or a command line.
  if (transport === 'http') {
    const verdict = context.egress.checkStatic(config.endpoint);
    if (!verdict.allowed)
      error('mcp.config.endpoint_refused', 'endpoint', `The egress policy does not permit the endpoint (${verdict.code}).`);
    if (config.args !== undefined) error('mcp.config.args_unexpected', 'args', 'args is for stdio servers only.');
  } else if (stdioCommand(config) === null) {
    error('mcp.config.endpoint_invalid', 'endpoint', 'The stdio command line is empty or has an unclosed quote.');
  }

  // The stdio child's literal variables: stdio only, never tier-0, bounded (stdio-environment.ts).
  if (config.env !== undefined)
    errors.push(...checkStdioEnvironment(config.env, { transport, authName: config.authName, authScheme: scheme }));

  // § Discovery: an MCP tool may require only scopes whose first segment is mcp and whose
  // second is the server id.
  const prefix = `mcp.${config.serverId}.`;
  config.requiredScopes.forEach((scope, i) => {
    if (!scope.startsWith(prefix) || !/^[a-z0-9_]+(\.[a-z0-9_]+)*$/.test(scope.slice(prefix.length))) {
      error('mcp.config.scope_invalid', `requiredScopes.${i}`, `required_scopes may name only mcp.${config.serverId}.* scopes.`);
    }
  });
  return errors;
}
