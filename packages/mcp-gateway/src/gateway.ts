import { randomUUID } from 'node:crypto';
import type { Principal } from '@veetbot/domain';
import type { GatewayBinding, GatewayRuntime } from '@veetbot/ports';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  isInitializeRequest,
  isLegacyRequest,
  legacyStatelessFallback,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
  ProtocolError,
  ProtocolErrorCode,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpHttpHandler,
  type McpRequestContext,
  type LegacyHttpHandler,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { jsonRpcErrorResponse } from './json-rpc-error';
import { toolServer } from './tool-server';
import { AGENT_HEADER, DEADLINE_HEADER, RUN_HEADER, RUN_RESPONSE_HEADER, SESSION_RESPONSE_HEADER } from './wire-names';

export interface McpGatewaySettings {
  /** Host header hostnames accepted (DNS-rebinding protection); default the localhost names. */
  readonly allowedHostnames: readonly string[];
  /** Origin hostnames accepted when a browser sends one; default the localhost names. */
  readonly allowedOrigins: readonly string[];
  /** How long a tools/call waits for its outcome before answering "still running". */
  readonly callWaitMs: number;
  /** Stateful (2025) MCP sessions held by this process, and by one tenant. */
  readonly maxSessions: number;
  readonly maxSessionsPerTenant: number;
  /** A stateful MCP session unused this long is ended (as a DELETE would end it). */
  readonly sessionIdleMs: number;
  /** The deadline of a run the gateway starts, and the most a client may ask for. */
  readonly defaultDeadlineSeconds: number;
  readonly maxDeadlineSeconds: number;
  /** Largest request body the gateway reads (the api's own limit applies first). */
  readonly maxRequestBodyBytes: number;
}

export const DEFAULT_MCP_GATEWAY_SETTINGS: McpGatewaySettings = {
  allowedHostnames: localhostAllowedHostnames(),
  allowedOrigins: localhostAllowedOrigins(),
  callWaitMs: 60_000,
  maxSessions: 1000,
  maxSessionsPerTenant: 64,
  sessionIdleMs: 30 * 60_000,
  defaultDeadlineSeconds: 3600,
  maxDeadlineSeconds: 86_400,
  maxRequestBodyBytes: 1024 * 1024,
};

export interface McpGatewayOptions {
  readonly runtime: GatewayRuntime;
  readonly settings?: Partial<McpGatewaySettings>;
  readonly version?: string;
  /** Where an unexpected error of ours is reported; a client only ever sees a JSON-RPC error. */
  readonly onError?: (error: unknown) => void;
  /**
   * What the SDK reports about a client's malformed traffic (bad JSON, an empty batch, an
   * unknown session): the client's fault, answered with a JSON-RPC error, and never logged as
   * ours — a hostile client must not be able to fill the operator's error log. Default: dropped.
   */
  readonly onProtocolError?: (error: Error) => void;
}

/** A stateful MCP session: its SDK transport and server, and the veetbot session and run. */
interface HeldSession {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly server: Server;
  readonly binding: GatewayBinding;
  /** The gateway opened the veetbot session, so ending the MCP session closes it. */
  readonly owned: boolean;
  lastUsed: number;
}

const VEETBOT_PRINCIPAL = 'veetbot.principal';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const AGENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The MCP gateway face (docs/adr/0044): a Streamable HTTP endpoint serving one veetbot
 * session's pinned tools to any MCP client. The 2026-07-28 revision is served stateless by the
 * SDK's createMcpHandler, each request naming its run; 2025 revisions (2025-11-25, 2025-06-18)
 * are served statefully — initialize opens (or names) the session and run and Mcp-Session-Id
 * maps to them — and a 2025 request without a session that names its run is served
 * statelessly. The caller authenticates first (the api's key check) and hands the principal in.
 */
export class McpGateway {
  readonly #runtime: GatewayRuntime;
  readonly #settings: McpGatewaySettings;
  readonly #version: string;
  readonly #onError: (error: unknown) => void;
  readonly #onProtocolError: (error: Error) => void;
  readonly #sessions = new Map<string, HeldSession>();
  /** Keys' default runs, for stateless requests that name none (docs/adr/0061). */
  readonly #defaults = new Map<string, DefaultRun>();
  /** Per tenant: initialize handshakes in flight (not yet held). */
  readonly #opening = new Map<string, number>();
  readonly #modern: McpHttpHandler;
  readonly #stateless: LegacyHttpHandler;
  readonly #sweep: ReturnType<typeof setInterval>;
  #stopping = false;
  /** Strictly increasing use stamps: recency must not tie within one millisecond. */
  #lastTick = 0;

  constructor(options: McpGatewayOptions) {
    this.#runtime = options.runtime;
    this.#settings = { ...DEFAULT_MCP_GATEWAY_SETTINGS, ...options.settings };
    this.#version = options.version ?? '0.1.0';
    this.#onError = options.onError ?? (() => undefined);
    this.#onProtocolError = options.onProtocolError ?? (() => undefined);
    const factory = (ctx: McpRequestContext) => this.#statelessServer(ctx);
    this.#modern = createMcpHandler(factory, {
      legacy: 'reject',
      maxRequestBodySize: this.#settings.maxRequestBodyBytes,
      onerror: (error) => this.#onProtocolError(error),
    });
    this.#stateless = legacyStatelessFallback(factory, (error) => this.#onProtocolError(error), {
      maxRequestBodySize: this.#settings.maxRequestBodyBytes,
    });
    const every = Math.max(1000, Math.min(60_000, Math.floor(this.#settings.sessionIdleMs / 2)));
    this.#sweep = setInterval(() => this.#expireIdle(), every);
    this.#sweep.unref();
  }

  /**
   * DNS-rebinding protection, before anything else (and before the key is looked at): a Host
   * or a browser Origin outside the allowlists is refused 403.
   */
  refuseHostile(request: Request): Response | undefined {
    return (
      hostHeaderValidationResponse(request, [...this.#settings.allowedHostnames]) ??
      originValidationResponse(request, [...this.#settings.allowedOrigins])
    );
  }

  /** Serve one HTTP request of an authenticated principal. Never throws. */
  async fetch(request: Request, principal: Principal): Promise<Response> {
    if (this.#stopping) return jsonRpcErrorResponse(503, -32603, 'service.unavailable', 'The server is shutting down.');
    try {
      const authInfo: AuthInfo = {
        token: 'veetbot-api-key',
        clientId: principal.principal_id,
        scopes: [...principal.scopes],
        extra: { [VEETBOT_PRINCIPAL]: principal },
      };
      const parsedBody = request.method === 'POST' ? await parseJson(request) : undefined;
      const legacy = await isLegacyRequest(request, parsedBody, { maxRequestBodySize: this.#settings.maxRequestBodyBytes });
      const options = parsedBody === undefined ? { authInfo } : { authInfo, parsedBody };
      if (!legacy) {
        const response = await this.#modern.fetch(request, options);
        // A request that named no run acted in its key's default run: say which, as initialize does.
        const used = request.headers.get(RUN_HEADER) === null ? this.#settledDefault(principal, request.headers) : null;
        if (used === null) return response;
        const headers = new Headers(response.headers);
        headers.set(SESSION_RESPONSE_HEADER, used.sessionId);
        headers.set(RUN_RESPONSE_HEADER, used.runId);
        return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
      }
      return await this.#legacy(request, principal, authInfo, parsedBody);
    } catch (error) {
      this.#onError(error);
      return jsonRpcErrorResponse(500, -32603, 'internal', 'An internal error occurred; it has been logged.');
    }
  }

  /** Shutdown: every held MCP session's transport ends (the veetbot sessions stay: a restart is not a DELETE). */
  async close(): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#sweep);
    const held = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled([this.#modern.close(), ...held.map((s) => s.server.close())]);
  }

  /** How many stateful MCP sessions are held (tests, metrics). */
  get heldSessions(): number {
    return this.#sessions.size;
  }

  async #legacy(request: Request, principal: Principal, authInfo: AuthInfo, parsedBody: unknown): Promise<Response> {
    const options = parsedBody === undefined ? { authInfo } : { authInfo, parsedBody };
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId !== null) {
      const held = this.#sessions.get(sessionId);
      // Another key's MCP session is as unknown as a made-up id: the same 404, nothing leaked.
      if (
        held === undefined ||
        held.binding.principal.tenant_id !== principal.tenant_id ||
        held.binding.principal.principal_id !== principal.principal_id
      )
        return jsonRpcErrorResponse(404, -32001, 'mcp.session_not_found', 'Session not found.');
      held.lastUsed = this.#tick();
      try {
        return await held.transport.handleRequest(request, options);
      } finally {
        held.lastUsed = this.#tick();
      }
    }
    if (request.method === 'POST' && isInitializeRequest(parsedBody)) return this.#initialize(request, principal, options);
    // A 2025 client that keeps no session but names its run: served statelessly.
    if (request.method === 'POST' && request.headers.get(RUN_HEADER) !== null) return this.#stateless(request, options);
    return jsonRpcErrorResponse(
      400,
      -32000,
      'mcp.session_required',
      `Send initialize first (the response's Mcp-Session-Id names the session), or name a run with the ${RUN_HEADER} header.`,
    );
  }

  async #initialize(request: Request, principal: Principal, options: { authInfo: AuthInfo; parsedBody?: unknown }): Promise<Response> {
    const tenant = principal.tenant_id;
    // Handshakes still in flight count too, so a burst of initializes cannot pass the caps.
    const opening = this.#opening.get(tenant) ?? 0;
    // Full: the least recently used held session makes room (docs/adr/0061). SDK clients do not
    // send DELETE when they close, so a cap that only refused would be filled by the abandoned.
    // At the tenant's cap the room is the tenant's own; at the process's cap it is taken from the
    // tenant holding the most, so one tenant's churn never ends another's only sessions.
    if (this.#heldBy(tenant) + opening >= this.#settings.maxSessionsPerTenant) this.#evictLeastRecent(tenant);
    if (this.#sessions.size + this.#openingAll() >= this.#settings.maxSessions) this.#evictLeastRecent(this.#largestHolder());
    if (
      this.#sessions.size + this.#openingAll() >= this.#settings.maxSessions ||
      this.#heldBy(tenant) + opening >= this.#settings.maxSessionsPerTenant
    )
      // Only handshakes in flight fill the caps: nothing idle to reclaim.
      return jsonRpcErrorResponse(
        429,
        -32000,
        'mcp.sessions_exhausted',
        'Too many MCP sessions are opening at once; try again, or use the stateless 2026-07-28 revision.',
      );
    this.#opening.set(tenant, opening + 1);
    try {
      return await this.#handshake(request, principal, options);
    } finally {
      const left = (this.#opening.get(tenant) ?? 1) - 1;
      if (left <= 0) this.#opening.delete(tenant);
      else this.#opening.set(tenant, left);
    }
  }

  #openingAll(): number {
    let all = 0;
    for (const n of this.#opening.values()) all += n;
    return all;
  }

  #heldBy(tenant: string): number {
    let held = 0;
    for (const s of this.#sessions.values()) if (s.binding.principal.tenant_id === tenant) held += 1;
    return held;
  }

  #largestHolder(): string | undefined {
    const counts = new Map<string, number>();
    for (const s of this.#sessions.values()) {
      const tenant = s.binding.principal.tenant_id;
      counts.set(tenant, (counts.get(tenant) ?? 0) + 1);
    }
    let largest: string | undefined;
    for (const [tenant, n] of counts) if (largest === undefined || n > (counts.get(largest) ?? 0)) largest = tenant;
    return largest;
  }

  /**
   * End the tenant's least recently used held session as an idle one ends: its next request is
   * the protocol's 404, on which a client initializes again (MCP: session management).
   */
  #evictLeastRecent(tenant: string | undefined): void {
    if (tenant === undefined) return;
    let oldest: [string, HeldSession] | undefined;
    for (const entry of this.#sessions)
      if (entry[1].binding.principal.tenant_id === tenant && (oldest === undefined || entry[1].lastUsed < oldest[1].lastUsed))
        oldest = entry;
    if (oldest !== undefined) void this.#end(oldest[0]);
  }

  async #handshake(request: Request, principal: Principal, options: { authInfo: AuthInfo; parsedBody?: unknown }): Promise<Response> {
    const named = request.headers.get(RUN_HEADER);
    let binding: GatewayBinding | null;
    let owned = false;
    if (named !== null) {
      binding = UUID.test(named) ? await this.#runtime.bindRun(principal, named) : null;
      if (binding === null) return jsonRpcErrorResponse(404, -32001, 'not_found', `No run of yours has the id in ${RUN_HEADER}.`);
    } else {
      const open = openRequest(request.headers, this.#settings);
      if (typeof open === 'string') return jsonRpcErrorResponse(400, -32602, 'request.invalid', open);
      binding = await this.#runtime.open(principal, open);
      owned = true;
    }
    const bound = binding;
    // Each request acts as the key that sent it (checked to be the same tenant and principal as
    // the one that opened the session): scopes are the key's now, not at initialize.
    const server = this.#server(async (ctx) => ({ ...bound, principal: principalOf(ctx.http?.authInfo) ?? bound.principal }));
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.#sessions.set(id, { transport, server, binding: bound, owned, lastUsed: this.#tick() });
      },
      // DELETE: the MCP session ends, and with it the veetbot session the gateway opened for it.
      onsessionclosed: (id) => this.#end(id),
      maxRequestBodySize: this.#settings.maxRequestBodyBytes,
    });
    transport.onerror = (error) => this.#onProtocolError(error);
    await server.connect(transport);
    const response = await transport.handleRequest(request, options);
    if (transport.sessionId === undefined || !this.#sessions.has(transport.sessionId)) {
      // The handshake failed: nothing is held, and a session opened for it is closed again.
      await server.close().catch(this.#onError);
      if (owned) await this.#runtime.close(bound).catch(this.#onError);
      return response;
    }
    // The veetbot ids beside Mcp-Session-Id: the run is where its approvals, events and
    // invocations are read through the REST API.
    const headers = new Headers(response.headers);
    headers.set(SESSION_RESPONSE_HEADER, bound.sessionId);
    headers.set(RUN_RESPONSE_HEADER, bound.runId);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }

  async #end(id: string): Promise<void> {
    const held = this.#sessions.get(id);
    if (held === undefined) return;
    this.#sessions.delete(id);
    if (held.owned) await this.#runtime.close(held.binding).catch(this.#onError);
    // After the DELETE's answer: closing the transport inside its own callback would cut it.
    setImmediate(() => void held.server.close().catch(this.#onError));
  }

  #tick(): number {
    this.#lastTick = Math.max(this.#lastTick + 0.001, Date.now());
    return this.#lastTick;
  }

  #expireIdle(): void {
    const before = Date.now() - this.#settings.sessionIdleMs;
    for (const [id, held] of this.#sessions) if (held.lastUsed < before) void this.#end(id);
    for (const [key, held] of this.#defaults) if (held.lastUsed < before) this.#dropDefault(key, null);
  }

  #server(binding: (ctx: ServerContext) => Promise<GatewayBinding>, reopen?: (ended: GatewayBinding) => Promise<GatewayBinding>): Server {
    return toolServer({
      runtime: this.#runtime,
      binding,
      ...(reopen === undefined ? {} : { reopen }),
      callWaitMs: this.#settings.callWaitMs,
      stopping: () => this.#stopping,
      version: this.#version,
      onError: this.#onError,
      onProtocolError: this.#onProtocolError,
    });
  }

  /**
   * Stateless requests (2026-07-28, or 2025 without a session) name their run in a header; one
   * that names none acts in its key's default run (docs/adr/0061).
   */
  #statelessServer(ctx: McpRequestContext): Server {
    const principal = principalOf(ctx.authInfo);
    const headers = ctx.requestInfo?.headers ?? new Headers();
    const named = headers.get(RUN_HEADER);
    let resolved: Promise<GatewayBinding> | undefined;
    const binding = () => {
      resolved ??= (async () => {
        if (principal === undefined) throw new ProtocolError(ProtocolErrorCode.InternalError, 'No principal.');
        if (named === null) return this.#defaultBinding(principal, headers);
        const bound = UUID.test(named) ? await this.#runtime.bindRun(principal, named) : null;
        if (bound === null) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `No run of yours has the id in ${RUN_HEADER}.`);
        return bound;
      })();
      return resolved;
    };
    return this.#server(
      binding,
      named !== null || principal === undefined
        ? undefined
        : async (ended) => {
            // The default run ended (its deadline, a cancellation, a breaker): the next one opens.
            this.#dropDefault(defaultKey(principal, headers), ended);
            resolved = this.#defaultBinding(principal, headers);
            return resolved;
          },
    );
  }

  /**
   * The key's default session and run (docs/adr/0061): opened on the first request of a key
   * that names no run — as a 2025 initialize opens one — and reused by every such request of
   * that key and agent id, across connections, until its run ends or it is idle for
   * sessionIdleMs; bounded by the same caps as held sessions, least recently used ending first.
   */
  #defaultBinding(principal: Principal, headers: Headers): Promise<GatewayBinding> {
    const key = defaultKey(principal, headers);
    const now = Date.now();
    const held = this.#defaults.get(key);
    if (held !== undefined && (held.expiresAt === null || held.expiresAt > now)) {
      held.lastUsed = this.#tick();
      return held.binding;
    }
    if (held !== undefined) this.#dropDefault(key, null);
    const open = openRequest(headers, this.#settings);
    if (typeof open === 'string') return Promise.reject(new ProtocolError(ProtocolErrorCode.InvalidParams, open));
    const tenant = principal.tenant_id;
    let ofTenant: [string, DefaultRun] | undefined;
    let count = 0;
    for (const entry of this.#defaults)
      if (entry[1].tenant === tenant) {
        count += 1;
        if (ofTenant === undefined || entry[1].lastUsed < ofTenant[1].lastUsed) ofTenant = entry;
      }
    if (count >= this.#settings.maxSessionsPerTenant && ofTenant !== undefined) this.#dropDefault(ofTenant[0], null);
    if (this.#defaults.size >= this.#settings.maxSessions) {
      const oldest = [...this.#defaults].sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0];
      if (oldest !== undefined) this.#dropDefault(oldest[0], null);
    }
    const entry: DefaultRun = {
      tenant,
      binding: this.#runtime.open(principal, open),
      lastUsed: this.#tick(),
      // A little before the run's deadline: a call then starts in a fresh run, not a dying one.
      expiresAt: now + Math.max(1, open.deadlineSeconds - 60) * 1000,
      bound: null,
    };
    this.#defaults.set(key, entry);
    entry.binding.then(
      (bound) => {
        entry.bound = bound;
      },
      () => {
        if (this.#defaults.get(key) === entry) this.#defaults.delete(key);
      },
    );
    return entry.binding;
  }

  /** Forget a default run (and close its veetbot session); `ended` only if it is still that one. */
  #dropDefault(key: string, ended: GatewayBinding | null): void {
    const held = this.#defaults.get(key);
    if (held === undefined || (ended !== null && held.bound !== null && held.bound.runId !== ended.runId)) return;
    this.#defaults.delete(key);
    held.binding.then((bound) => this.#runtime.close(bound)).catch(this.#onError);
  }

  /** The default binding a request without a run header acted in, if it is settled (response headers). */
  #settledDefault(principal: Principal, headers: Headers): GatewayBinding | null {
    return this.#defaults.get(defaultKey(principal, headers))?.bound ?? null;
  }
}

/** A key's default session and run (docs/adr/0061). */
interface DefaultRun {
  readonly tenant: string;
  readonly binding: Promise<GatewayBinding>;
  lastUsed: number;
  readonly expiresAt: number | null;
  bound: GatewayBinding | null;
}

/** Per key (principal) and agent id: the agent id decides which tools the session enables. */
function defaultKey(principal: Principal, headers: Headers): string {
  return JSON.stringify([principal.tenant_id, principal.principal_id, headers.get(AGENT_HEADER) ?? 'mcp-client']);
}

/** The principal the api authenticated, handed through the SDK as the request's AuthInfo. */
function principalOf(authInfo: AuthInfo | undefined): Principal | undefined {
  return authInfo?.extra?.[VEETBOT_PRINCIPAL] as Principal | undefined;
}

/** The body as JSON, read from a copy (the SDK may read the request itself); undefined when it is not JSON. */
async function parseJson(request: Request): Promise<unknown> {
  try {
    return JSON.parse(await request.clone().text()) as unknown;
  } catch {
    return undefined;
  }
}

function openRequest(headers: Headers, settings: McpGatewaySettings): { agentId: string; deadlineSeconds: number } | string {
  const agentId = headers.get(AGENT_HEADER) ?? 'mcp-client';
  if (!AGENT_ID.test(agentId)) return `${AGENT_HEADER} must be 1-128 characters of A-Z a-z 0-9 . _ : -.`;
  const deadline = headers.get(DEADLINE_HEADER);
  const deadlineSeconds = deadline === null ? settings.defaultDeadlineSeconds : Number(deadline);
  if (
    !/^\d{1,6}$/.test(deadline ?? '0') ||
    !Number.isSafeInteger(deadlineSeconds) ||
    deadlineSeconds < 1 ||
    deadlineSeconds > settings.maxDeadlineSeconds
  )
    return `${DEADLINE_HEADER} must be a whole number of seconds from 1 to ${settings.maxDeadlineSeconds}.`;
  return { agentId, deadlineSeconds };
}
