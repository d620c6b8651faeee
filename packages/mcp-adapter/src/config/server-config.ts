import { z } from 'zod';
import { IdempotencyClass, RiskLevel, SideEffectClass } from '@veetbot/domain';
import type { ToolCallLimits } from '@veetbot/ports';

/** § Authentication: the closed set of five. */
export const AUTH_SCHEMES = ['none', 'bearer', 'header', 'oauth2_client', 'env'] as const;
export type AuthScheme = (typeof AUTH_SCHEMES)[number];

export const MCP_TRANSPORTS = ['stdio', 'http'] as const;

/** § Where a server may live: the three timeouts and their defaults. */
export const DEFAULT_CONNECT_TIMEOUT_SECONDS = 10;
export const DEFAULT_REQUEST_TIMEOUT_SECONDS = 30;
export const DEFAULT_IDLE_TIMEOUT_SECONDS = 900;

/** Bounds: a configuration cannot declare a timeout or an output limit without end. */
export const CONFIG_BOUNDS = {
  timeoutSeconds: 3_600,
  connectTimeoutSeconds: 300,
  requestTimeoutSeconds: 3_600,
  idleTimeoutSeconds: 86_400,
  maximumOutputBytes: 256 * 1024 * 1024,
} as const;

const positiveSeconds = (max: number) => z.number().positive().max(max);

/**
 * A tool's name as the server lists it in tools/list (the MCP tool-name characters; not the
 * registry's `mcp.{server_id}.…` name), in the operator's `tools` and `url_fetching_tools`.
 * `read_resource` names the synthetic resource tool (docs/adr/0052).
 */
export const REMOTE_TOOL_NAME_PATTERN = /^[A-Za-z0-9_./-]{1,128}$/;
const RemoteToolNames = z
  .array(
    z.string().regex(REMOTE_TOOL_NAME_PATTERN, 'Each entry must be a tool name as the server lists it (A-Z a-z 0-9 _ - . /, 1 to 128).'),
  )
  .refine((names) => new Set(names).size === names.length, 'The list names a tool twice.');

/** A lookup tool's argument that takes the key: a plain property name. */
export const KEY_ARGUMENT_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/**
 * Operator only (docs/adr/0066): the server's lookup tool, which answers whether the call that
 * carried an idempotency key was applied. `name` as the server lists it; `keyArgument` the one
 * argument the key is passed in. The file spells it `lookup_tool: { "name", "key_argument" }`.
 */
export const McpLookupTool = z.preprocess(
  (value) =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k === 'key_argument' ? 'keyArgument' : k, v]))
      : value,
  z
    .object({
      name: z.string().regex(REMOTE_TOOL_NAME_PATTERN, 'name must be a tool name as the server lists it.'),
      keyArgument: z.string().regex(KEY_ARGUMENT_PATTERN, 'key_argument must be a property name (A-Z a-z 0-9 _ -, 1 to 64).'),
    })
    .strict(),
);
export type McpLookupTool = z.infer<typeof McpLookupTool>;

/** RFC 6749 §2.3 / RFC 7591: how a pre-registered client authenticates at the token endpoint. */
export const TOKEN_ENDPOINT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;

const SNAKE_KEYS: Record<string, string> = {
  client_id: 'clientId',
  client_secret_ref: 'clientSecretRef',
  token_endpoint_auth_method: 'tokenEndpointAuthMethod',
};

/**
 * Operator only (docs/adr/0077): a client registered with the server's authorization server
 * beforehand, for the delegated authorization flow (auth_scheme none, a server that answers 401
 * with resource metadata). The secret is a credential reference, never inline. The file spells
 * it `oauth_client: { "client_id", "client_secret_ref", "token_endpoint_auth_method" }`.
 */
export const McpOAuthClient = z.preprocess(
  (value) =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).map(([k, v]) => [SNAKE_KEYS[k] ?? k, v]))
      : value,
  z
    .object({
      clientId: z.string().min(1).max(2048),
      clientSecretRef: z.string().min(1).nullable().default(null),
      tokenEndpointAuthMethod: z.enum(TOKEN_ENDPOINT_AUTH_METHODS).optional(),
    })
    .strict(),
);
export type McpOAuthClient = z.infer<typeof McpOAuthClient>;

/** docs/adr/0083: the JWS algorithms a private_key_jwt client assertion may be signed with. */
export const CLIENT_ASSERTION_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
export type ClientAssertionAlg = (typeof CLIENT_ASSERTION_ALGS)[number];

const ASSERTION_KEYS: Record<string, string> = { client_id: 'clientId', key_id: 'keyId' };

/**
 * Operator only (docs/adr/0083): an oauth2_client server whose client authenticates with
 * private_key_jwt (RFC 7523) rather than a secret. credential_ref then resolves to the PEM
 * private key (PKCS#8, SEC1 or PKCS#1); the client id, the signing algorithm, the assertion's
 * audience (default: the token endpoint, RFC 7523 §3) and an optional key id are configuration,
 * as the scheme is (§ Authentication: a rotation never changes how the platform authenticates).
 * The file spells it `client_assertion: { "client_id", "alg", "audience", "key_id" }`.
 */
export const McpClientAssertion = z.preprocess(
  (value) =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).map(([k, v]) => [ASSERTION_KEYS[k] ?? k, v]))
      : value,
  z
    .object({
      clientId: z
        .string()
        .min(1)
        .max(2048)
        .regex(/^[\x20-\x7e]+$/, 'client_id must be printable ASCII.'),
      alg: z.enum(CLIENT_ASSERTION_ALGS),
      audience: z.string().url().max(2048).optional(),
      keyId: z
        .string()
        .min(1)
        .max(256)
        .regex(/^[\x20-\x7e]+$/, 'key_id must be printable ASCII.')
        .optional(),
    })
    .strict(),
);
export type McpClientAssertion = z.infer<typeof McpClientAssertion>;

/**
 * One server's configuration: the columns of § Schema additions' mcp_servers in camelCase, plus
 * the stdio argument vector, the stdio child's literal variables and the three per-server
 * timeout overrides. § Discovery: when the
 * operator declares no classification, the most restrictive combination the type system
 * permits (EXTERNAL_WRITE, HIGH, NON_IDEMPOTENT). The shape lives here; the rules that span
 * fields (Gate 14) live in validateServerConfig.
 */
export const McpServerConfig = z
  .object({
    serverId: z.string(),
    transport: z.enum(MCP_TRANSPORTS),
    /** stdio: the command (a command line when `args` is absent); http: the URL. */
    endpoint: z.string().min(1),
    /** stdio only: the argument vector. Never holds a credential (§ Authentication). */
    args: z.array(z.string()).optional(),
    /**
     * stdio only (so operator only): literal, NON-secret variables added to the built child
     * environment (config/stdio-environment.ts has the rules). Never a credential: that is
     * credential_ref with the env scheme.
     */
    env: z.record(z.string(), z.string()).optional(),
    authScheme: z.enum(AUTH_SCHEMES),
    authName: z.string().nullable().default(null),
    /** A broker reference, never a secret. */
    credentialRef: z.string().min(1).nullable().default(null),
    tokenEndpoint: z.string().nullable().default(null),
    tokenScopes: z.array(z.string().min(1)).nullable().default(null),
    sideEffect: SideEffectClass.default('external_write'),
    risk: RiskLevel.default('high'),
    idempotency: IdempotencyClass.default('non_idempotent'),
    requiredScopes: z.array(z.string()).default([]),
    timeoutSeconds: z.number().int().positive().max(CONFIG_BOUNDS.timeoutSeconds).default(DEFAULT_REQUEST_TIMEOUT_SECONDS),
    maximumOutputBytes: z
      .number()
      .int()
      .positive()
      .max(CONFIG_BOUNDS.maximumOutputBytes)
      .default(1024 * 1024),
    connectTimeoutSeconds: positiveSeconds(CONFIG_BOUNDS.connectTimeoutSeconds).optional(),
    requestTimeoutSeconds: positiveSeconds(CONFIG_BOUNDS.requestTimeoutSeconds).optional(),
    idleTimeoutSeconds: positiveSeconds(CONFIG_BOUNDS.idleTimeoutSeconds).optional(),
    enabled: z.boolean().default(true),
    /**
     * Operator only (docs/adr/0052): the allow-list of the server's tools this deployment
     * registers, by the names the server lists them under; a tool it does not name is never
     * registered or offered. Absent: every tool the server lists (warned at start).
     */
    tools: RemoteToolNames.min(1, 'tools must name at least one tool (remove the server to offer none).').optional(),
    /**
     * Operator only: the tools that fetch a URL their caller chooses (an SSRF gadget on the
     * worker's network). Classified NETWORK_READ, and every call refused
     * (policy.egress.url_fetch_refused) unless allowUrlFetching is true.
     */
    urlFetchingTools: RemoteToolNames.optional(),
    /** Operator only: the explicit opt-in that lets tenants call this server's urlFetchingTools. */
    allowUrlFetching: z.boolean().optional(),
    /**
     * Operator only (docs/adr/0066): the lookup tool that reconciles this server's UNCERTAIN
     * calls by their idempotency key. Needs `tools` (the calls it reconciles are those tools').
     */
    lookupTool: McpLookupTool.optional(),
    /** Operator only (docs/adr/0077): the pre-registered client of the delegated authorization flow. */
    oauthClient: McpOAuthClient.optional(),
    /** Operator only (docs/adr/0083): oauth2_client with private_key_jwt; credential_ref resolves to the private key. */
    clientAssertion: McpClientAssertion.optional(),
  })
  .strict();
export type McpServerConfig = z.infer<typeof McpServerConfig>;

/** The server's tools this deployment registers: all of them, or only the allow-list's (docs/adr/0052). */
export function offersRemoteTool(config: Pick<McpServerConfig, 'tools'>, remoteName: string): boolean {
  return config.tools === undefined || config.tools.includes(remoteName);
}

/** Whether this server's URL-fetching tools are refused to tenants (no opt-in; docs/adr/0052). */
export function refusesUrlFetching(config: Pick<McpServerConfig, 'urlFetchingTools' | 'allowUrlFetching'>): boolean {
  return (config.urlFetchingTools?.length ?? 0) > 0 && config.allowUrlFetching !== true;
}
export type McpServerConfigInput = z.input<typeof McpServerConfig>;

export interface EffectiveTimeouts {
  readonly connectMs: number;
  readonly requestMs: number;
  readonly idleMs: number;
}

export function effectiveTimeouts(config: McpServerConfig): EffectiveTimeouts {
  return {
    connectMs: (config.connectTimeoutSeconds ?? DEFAULT_CONNECT_TIMEOUT_SECONDS) * 1000,
    requestMs: (config.requestTimeoutSeconds ?? DEFAULT_REQUEST_TIMEOUT_SECONDS) * 1000,
    idleMs: (config.idleTimeoutSeconds ?? DEFAULT_IDLE_TIMEOUT_SECONDS) * 1000,
  };
}

/**
 * What every call to this server's tools is limited by, declared with their registration: the
 * request timeout (§ MCP: "per call, capped by the tool"). The executor folds it into the one
 * effective timeout; the adapter never applies it on its own (docs/adr/0025).
 */
export function callLimits(config: McpServerConfig): ToolCallLimits {
  return { requestTimeoutSeconds: effectiveTimeouts(config).requestMs / 1000 };
}
