import {
  canonicalJson,
  decideRecovery,
  hardCaptureCeiling,
  normalizeRemoteToolName,
  sha256Hex,
  ToolUnavailableError,
  type ToolResultInput,
  type UnavailableReasonCode,
} from '@veetbot/domain';
import type {
  CredentialOrigin,
} from '@veetbot/domain';
import type {
  DynamicTool,
  EgressPolicy,
  EventStore,
  McpCatalogGeneration,
  McpCatalogStore,
  McpClientPort,
  McpServerPreparation,
  McpSessionPreparationResult,
  McpSessionRequest,
  NewEvent,
  RegistrationReport,
  SchemaValidator,
  SessionLifecycle,
  SessionStore,
  SkillStore,
  TenantCredentialResolvers,
  ToolExecutionContext,
  ToolMetrics,
} from '@veetbot/ports';
import type { ConfiguredServer, McpServerDirectory } from '../config/server-directory';
import { callLimits, effectiveTimeouts, type McpServerConfig } from '../config/server-config';
import { DEFAULT_OPERATOR_SETTINGS } from '../config/operator-config';
import { connectReasonCode, isUnauthorized, McpConnection, type ConnectionDeps } from '../connection/mcp-connection';
import { McpAdapterError, McpAuthError } from '../errors';
import { cutUtf8, DESCRIPTION_MAX_BYTES } from '../mapping/description';
import { mapCatalog, READ_RESOURCE_REMOTE_NAME, type MappedTool } from '../mapping/map-catalog';
import { readRemoteCatalog } from '../mapping/remote-catalog';
import { countConnectFailure } from '../telemetry';
import { DEFAULT_MAX_LINE_BYTES, DEFAULT_STDERR_MAX_BYTES } from '../transport/stdio-server-transport';
import { mapCallError, mapCallResult, outcomeIsUncertainOnError, outcomeUnknown } from './call-results';
import { mcpEvents, type EventScope } from './mcp-events';
import { readResourceSpec, readResourceTool } from './read-resource';
import { Semaphore } from './semaphore';
import { ServerSession, SessionState, type TerminalCode } from './session-state';

export interface McpAdapterSettings {
  /** ADR-0131: connection, initialization and discovery share these across sessions. */
  readonly preparationSlots: number;
  /** ADR-0131: stdio startups also share these; a startup takes its process slot first. */
  readonly stdioStartupSlots: number;
  /** How long a tenant HTTP server's live discovery may be pinned again (stdio: the process lifetime). */
  readonly discoveryReuseSeconds: number;
  readonly warmupConnectTimeoutSeconds: number;
  readonly warmupRetrySeconds: number;
  readonly warmupAttempts: number;
  /**
   * § "Each API and worker process checks its own connections at most every thirty seconds (or
   * the configured idle timeout, if shorter)": the sweep's longest interval, at most 30.
   */
  readonly sweepIntervalSeconds: number;
  readonly stderrMaxBytes: number;
  readonly maxLineBytes: number;
}

export const DEFAULT_ADAPTER_SETTINGS: McpAdapterSettings = {
  preparationSlots: 8,
  stdioStartupSlots: 2,
  ...DEFAULT_OPERATOR_SETTINGS,
  sweepIntervalSeconds: 30,
  stderrMaxBytes: DEFAULT_STDERR_MAX_BYTES,
  maxLineBytes: DEFAULT_MAX_LINE_BYTES,
};

export interface McpAdapterDeps {
  /** Operator servers plus the tenant's enabled HTTP rows, each with its origin (serverDirectory). */
  readonly servers: McpServerDirectory;
  readonly catalog: McpCatalogStore;
  readonly events: EventStore;
  /** Prompts become skills when present. */
  readonly skills?: SkillStore;
  /**
   * ADR 0017: asked per connection with the tenant and the server's origin — a tenant's server
   * resolves only that tenant's secret:NAME, an operator's only env:/file:.
   */
  readonly credentials: TenantCredentialResolvers;
  readonly validator: SchemaValidator;
  readonly egress: EgressPolicy;
  /**
   * The egress policy of one server when servers differ: the operator's own servers follow the
   * operator configuration's `egress` section, tenant servers stay on `egress` (ADR 0022).
   * Absent: `egress` for every server.
   */
  readonly egressFor?: (config: ConfiguredServer) => EgressPolicy;
  readonly clock: { now(): Date };
  readonly settings?: Partial<McpAdapterSettings>;
  /**
   * § Spans and metrics: `mcp_requests_total` per JSON-RPC round trip and
   * `mcp_connect_failures_total` per failed connection attempt. Absent: nothing is counted
   * (spans still go to whatever tracer provider is registered).
   */
  readonly metrics?: ToolMetrics;
  /**
   * § "The same sweep observes durable session closure or deletion by another process": the
   * sweep reads what became of the sessions this process holds, in one statement (docs/adr/0024).
   * Absent: the sweep closes idle connections only.
   */
  readonly sessions?: Pick<SessionStore, 'lifecycle'>;
}

interface RawDiscovery {
  readonly tools: readonly unknown[];
  readonly resources: boolean;
  readonly prompts: readonly unknown[] | null;
}

type DiscoveryOutcome =
  | { readonly kind: 'live'; readonly connection: McpConnection; readonly raw: RawDiscovery; readonly durationMs: number }
  | { readonly kind: 'remembered'; readonly raw: RawDiscovery }
  | { readonly kind: 'failed'; readonly reasonCode: string };

/** What a registered tool's execute knows: its spec and where it goes — never a session. */
interface ToolRoute {
  readonly kind: 'call' | 'read_resource';
  readonly serverId: string;
  readonly remoteName: string;
  readonly spec: MappedTool['spec'];
  /** The spec with its version blanked, canonical: what a reconnection compares. */
  readonly identity: string;
}

interface Mapped {
  readonly catalogHash: string;
  readonly mapping: ReturnType<typeof mapCatalog>;
  readonly routes: readonly ToolRoute[];
}

const TERMINAL_AT_CONNECT = new Set(['tool.auth_failed', 'tool.auth_unsupported']);
const SWEEP_MAX_INTERVAL_MS = 30_000;
const SESSION_RETENTION_MS = 24 * 60 * 60 * 1000;
/**
 * A session this process prepared whose row the sweep has not yet seen: its open may still be
 * writing the row (the runtime prepares before it creates the session). Without a row after
 * this long, the open failed and its transports are let go.
 */
const UNCONFIRMED_GRACE_MS = 60_000;
const PROMPT_CONTENT_MAX_BYTES = 64 * 1024;
/** The tenant an operator server's warm-up resolves credentials for: none (the broker gives an operator server env:/file: only). */
const WARMUP_TENANT = '';

/** What a warm-up did: servers remembered, servers still failing after the last round, rounds run. */
export interface WarmUpReport {
  readonly warmed: readonly string[];
  readonly failed: readonly string[];
  readonly rounds: number;
}

function identityOf(spec: MappedTool['spec']): string {
  return canonicalJson({ ...spec, version: '' });
}

/**
 * § MCP, as the runtime sees it through McpClientPort. At session open: connect, initialize,
 * tools/list, map, register, record (catalog generations, mcp.* events) in configured-server
 * order — or pin the last live discovery (ADR-0131). Each registered tool is a DynamicTool whose
 * execute speaks tools/call; it runs inside the one pipeline like any other tool. Availability
 * is resolved at call time: unreachable, unauthorized (after the bounded ladder) and withdrawn
 * are ToolUnavailableError; the result of a call that went out is mapped under Decision 26.
 *
 * Sessions are keyed by id, and an execute finds its session and server through the context,
 * never through a closure: the registry shares one route per (name, version) across sessions.
 */
export class McpAdapter implements McpClientPort {
  readonly #deps: McpAdapterDeps;
  readonly #settings: McpAdapterSettings;
  readonly #sessions = new Map<string, SessionState>();
  /** ADR-0131: the last live discovery per whole server configuration. */
  readonly #memory = new Map<string, { readonly raw: RawDiscovery; readonly at: number }>();
  /** Catalog generations this process already wrote (the table is a history). */
  readonly #written = new Set<string>();
  readonly #slots: Semaphore;
  readonly #stdioSlots: Semaphore;
  readonly #preparations = new Set<Promise<unknown>>();
  readonly #background = new Set<Promise<unknown>>();
  readonly #warmupConnections = new Set<McpConnection>();
  readonly #stopping = new AbortController();
  #sweep: ReturnType<typeof setTimeout> | null = null;
  #sweeping = false;
  #shutDown = false;

  constructor(deps: McpAdapterDeps) {
    this.#deps = deps;
    this.#settings = { ...DEFAULT_ADAPTER_SETTINGS, ...(deps.settings ?? {}) };
    this.#slots = new Semaphore(this.#settings.preparationSlots);
    this.#stdioSlots = new Semaphore(this.#settings.stdioStartupSlots);
  }

  // ---------------------------------------------------------------------------------------
  // Preparation

  prepareSession(request: McpSessionRequest, register: (tools: readonly DynamicTool[]) => Promise<RegistrationReport>): Promise<McpSessionPreparationResult> {
    if (this.#shutDown) return Promise.reject(new McpAdapterError('mcp.shut_down', 'The MCP adapter is shut down.'));
    return this.#track(this.#preparations, this.#prepare(request, register));
  }

  async #prepare(request: McpSessionRequest, register: (tools: readonly DynamicTool[]) => Promise<RegistrationReport>): Promise<McpSessionPreparationResult> {
    const { tenantId, sessionId } = request;
    const wanted = request.serverIds;
    const configs = (await this.#deps.servers.list(tenantId)).filter((c) => c.enabled && (wanted === undefined || wanted.includes(c.serverId)));
    const session = this.#session(tenantId, sessionId);
    // One preparation of a session at a time: a server is marked tried only once its discovery
    // ends, so a concurrent second preparation would otherwise connect to it again. Other
    // sessions do not wait on this lock.
    session.preparations++;
    try {
      const release = await session.preparing.acquire();
      try {
        if (this.#shutDown) throw new McpAdapterError('mcp.shut_down', 'The MCP adapter is shut down.');
        return await this.#prepareLocked(session, configs, wanted !== undefined, register);
      } finally {
        release();
      }
    } finally {
      session.preparations--;
      session.lastActivity = Date.now();
    }
  }

  async #prepareLocked(session: SessionState, configs: readonly ConfiguredServer[], forceLive: boolean, register: (tools: readonly DynamicTool[]) => Promise<RegistrationReport>): Promise<McpSessionPreparationResult> {
    const { tenantId, sessionId } = session;
    // Typed work that names its servers (forceLive) is always live; a full preparation may pin a memory.

    // Preparation is recorded per server: a later preparation adds only servers not yet tried.
    const fresh: ServerSession[] = [];
    for (const config of configs) {
      let server = session.servers.get(config.serverId);
      if (server?.preparation != null) continue;
      if (server === undefined) {
        server = new ServerSession(config);
        session.servers.set(config.serverId, server);
      } else {
        server.config = config;
      }
      fresh.push(server);
    }

    // Concurrent under the slots; everything recorded afterwards in configured-server order.
    const outcomes = await Promise.all(fresh.map((server) => this.#discover(session, server, forceLive)));

    const events: NewEvent[] = [];
    const tools: DynamicTool[] = [];
    const generations: McpCatalogGeneration[] = [];
    const prompts: { server: ServerSession; connection: McpConnection; prompts: readonly unknown[] }[] = [];
    fresh.forEach((server, i) => {
      const outcome = outcomes[i]!;
      const { config } = server;
      const scope: EventScope = { sessionId, serverId: config.serverId, at: this.#deps.clock.now() };
      if (outcome.kind === 'failed') {
        // § A 401 at connect is terminal for the session: no tools, never retried here.
        if (TERMINAL_AT_CONNECT.has(outcome.reasonCode)) server.terminal = outcome.reasonCode as TerminalCode;
        server.preparation = { serverId: config.serverId, transport: config.transport, status: 'failed', reasonCode: outcome.reasonCode, catalogHash: null, toolCount: 0 };
        events.push(mcpEvents.disconnected(scope, server.handshakes, outcome.reasonCode));
        return;
      }
      const mapped = this.#map(config, outcome.raw);
      server.pinnedHash = mapped.catalogHash;
      server.relistAgain = false;
      if (outcome.kind === 'live') {
        server.connection = outcome.connection;
        this.#setLive(server, mapped);
        events.push(mcpEvents.connected(scope, server.handshakes, config.transport, mapped.routes.length, outcome.durationMs));
        if (outcome.raw.prompts !== null) prompts.push({ server, connection: outcome.connection, prompts: outcome.raw.prompts });
      } else {
        events.push(mcpEvents.pinned(scope, mapped.catalogHash, config.transport, mapped.routes.length));
      }
      for (const r of mapped.mapping.rejected) events.push(mcpEvents.toolRejected(scope, mapped.catalogHash, r.remoteName, r.reason));
      for (const c of mapped.mapping.conflicts) events.push(mcpEvents.catalogConflict(scope, mapped.catalogHash, c.registryName, c.remoteNames));
      tools.push(...mapped.routes.map((route) => this.#dynamicTool(route, config)));
      generations.push({
        serverId: config.serverId,
        catalogHash: mapped.catalogHash,
        discoveredAt: scope.at,
        tools: mapped.mapping.tools.map((t) => ({ remoteName: t.remoteName, registryName: t.spec.name, inputSchema: t.spec.input_schema })),
      });
      server.preparation = {
        serverId: config.serverId,
        transport: config.transport,
        status: outcome.kind === 'live' ? 'connected' : 'pinned',
        reasonCode: null,
        catalogHash: mapped.catalogHash,
        toolCount: mapped.routes.length,
      };
    });

    const registration = await register(tools);
    // ADR-0131: the catalog generations and the events in one transaction, so a failure commits
    // none of them. The table is a history: a generation this process wrote is not written again,
    // and it counts as written only once the transaction committed.
    const writtenKey = (g: McpCatalogGeneration) => `${tenantId}\u0000${g.serverId}\u0000${g.catalogHash}`;
    const unwritten = generations.filter((g) => !this.#written.has(writtenKey(g)));
    if (unwritten.length > 0 || events.length > 0) {
      try {
        await this.#deps.catalog.recordPreparation(tenantId, unwritten, events);
      } catch (error) {
        await this.#forgetPreparation(fresh);
        throw error;
      }
    }
    for (const generation of unwritten) this.#written.add(writtenKey(generation));
    for (const p of prompts) await this.#recordPrompts(tenantId, p.server.config, p.connection, p.prompts);
    if (outcomes.some((o) => o.kind === 'live') || this.#deps.sessions !== undefined) this.#ensureSweep();

    const servers = configs.map((c) => session.servers.get(c.serverId)?.preparation).filter((p): p is McpServerPreparation => p != null);
    return { servers, registration };
  }

  /**
   * Nothing of a preparation whose recording failed was committed, so it is not remembered as
   * tried either: its servers are tried again by the next preparation, and the connections it
   * opened are closed (without an event: their connected events did not commit).
   */
  async #forgetPreparation(servers: readonly ServerSession[]): Promise<void> {
    const closes: Promise<void>[] = [];
    for (const server of servers) {
      const connection = server.connection;
      // A 401 at connect decided by this preparation goes with it (its event did not commit).
      if (server.preparation?.status === 'failed' && server.terminal === server.preparation.reasonCode) server.terminal = null;
      server.preparation = null;
      server.pinnedHash = null;
      server.connection = null;
      server.liveHash = null;
      server.liveSpecs = null;
      if (connection !== null && !connection.closed) closes.push(connection.close());
    }
    await Promise.allSettled(closes);
  }

  async #discover(session: SessionState, server: ServerSession, forceLive: boolean): Promise<DiscoveryOutcome> {
    const { config } = server;
    const key = this.#memoryKey(session.tenantId, config);
    if (!forceLive) {
      const remembered = this.#memory.get(key);
      const fresh = remembered !== undefined && (config.transport === 'stdio' || Date.now() - remembered.at <= this.#settings.discoveryReuseSeconds * 1000);
      if (fresh) return { kind: 'remembered', raw: remembered.raw };
    }
    // A stdio startup takes its process slot before a general slot; capacity waiting comes
    // before the connect timeout starts (ADR-0131).
    let releaseStartup: (() => void) | null = config.transport === 'stdio' ? await this.#stdioSlots.acquire() : null;
    const release = await this.#slots.acquire();
    let connection: McpConnection | null = null;
    try {
      const started = Date.now();
      server.handshakes++;
      connection = await this.#open(session, server);
      releaseStartup?.();
      releaseStartup = null;
      const raw = await this.#discoverRaw(connection);
      this.#memory.set(key, { raw, at: Date.now() });
      return { kind: 'live', connection, raw, durationMs: Date.now() - started };
    } catch (error) {
      await connection?.close();
      // A failed handshake forgets the remembered discovery (ADR-0131).
      this.#memory.delete(key);
      const reasonCode = connectReasonCode(error);
      countConnectFailure(this.#deps.metrics, config.serverId, reasonCode);
      return { kind: 'failed', reasonCode };
    } finally {
      releaseStartup?.();
      release();
    }
  }

  async #discoverRaw(connection: McpConnection, withPrompts = true): Promise<RawDiscovery> {
    // No long-lived signal on these requests (the SDK never removes a request's abort
    // listener): shutdown closes the connection, which ends them.
    const tools = connection.capabilities.tools ? await connection.listTools() : [];
    let prompts: unknown[] | null = null;
    if (withPrompts && connection.capabilities.prompts && this.#deps.skills !== undefined) {
      prompts = await connection.listPrompts().catch(() => null);
    }
    return { tools, resources: connection.capabilities.resources, prompts };
  }

  #open(session: SessionState, server: ServerSession, connectTimeoutMs?: number): Promise<McpConnection> {
    const holder: { connection: McpConnection | null } = { connection: null };
    const opened = McpConnection.open(server.config, this.#connectionDeps(session.tenantId, server.config), {
      ...(connectTimeoutMs === undefined ? {} : { connectTimeoutMs }),
      signal: this.#stopping.signal,
      onToolsListChanged: () => this.#onListChanged(session, server),
      onUnexpectedClose: (reasonCode) => {
        if (holder.connection !== null && server.connection === holder.connection) this.#onDropped(session, server, reasonCode);
      },
    });
    return opened.then((connection) => {
      holder.connection = connection;
      return connection;
    });
  }

  #connectionDeps(tenantId: string, config: ConfiguredServer): ConnectionDeps {
    return {
      credentials: this.#deps.credentials.forServer(tenantId, config.origin),
      egress: this.#deps.egressFor?.(config) ?? this.#deps.egress,
      now: () => this.#deps.clock.now(),
      maxLineBytes: this.#settings.maxLineBytes,
      stderrMaxBytes: this.#settings.stderrMaxBytes,
      metrics: this.#deps.metrics,
    };
  }

  #map(config: McpServerConfig, raw: RawDiscovery): Mapped {
    const catalog = readRemoteCatalog(raw.tools);
    const mapping = mapCatalog(config, catalog, this.#deps.validator, { resources: raw.resources });
    const routes: ToolRoute[] = mapping.tools.map((t) => ({ kind: 'call', serverId: config.serverId, remoteName: t.remoteName, spec: t.spec, identity: identityOf(t.spec) }));
    if (raw.resources) {
      const spec = readResourceSpec(config);
      routes.push({ kind: 'read_resource', serverId: config.serverId, remoteName: READ_RESOURCE_REMOTE_NAME, spec, identity: identityOf(spec) });
    }
    return { catalogHash: catalog.catalogHash, mapping, routes };
  }

  #setLive(server: ServerSession, mapped: Mapped): void {
    server.liveHash = mapped.catalogHash;
    server.liveSpecs = new Map(mapped.routes.map((r) => [r.spec.name, r.identity]));
  }

  #dynamicTool(route: ToolRoute, config: McpServerConfig): DynamicTool {
    // The server's request timeout reaches the executor with the registration: it computes the
    // one effective timeout (docs/adr/0025).
    return { spec: route.spec, limits: callLimits(config), execute: (args, context) => this.#execute(route, args, context) };
  }

  /** § Prompts are skills, and read-only ones: source mcp, EXTERNAL_UNTRUSTED, never edited here. */
  async #recordPrompts(tenantId: string, config: McpServerConfig, connection: McpConnection, prompts: readonly unknown[]): Promise<void> {
    const skills = this.#deps.skills;
    if (skills === undefined) return;
    for (const prompt of prompts) {
      if (typeof prompt !== 'object' || prompt === null || typeof (prompt as { name?: unknown }).name !== 'string') continue;
      const declaration = prompt as { name: string; description?: unknown; arguments?: unknown };
      try {
        const args = Array.isArray(declaration.arguments) ? declaration.arguments.filter((a): a is { name: string; description?: unknown; required?: unknown } => typeof a === 'object' && a !== null && typeof (a as { name?: unknown }).name === 'string') : [];
        const description = typeof declaration.description === 'string' ? cutUtf8(declaration.description, DESCRIPTION_MAX_BYTES) : '';
        let body = `MCP prompt "${declaration.name}" from server ${config.serverId}.\n${description}`;
        if (args.length > 0) {
          body += `\nArguments:\n${args.map((a) => `- ${a.name}${a.required === true ? ' (required)' : ''}${typeof a.description === 'string' ? `: ${a.description}` : ''}`).join('\n')}`;
        } else {
          const rendered = await connection.getPrompt(declaration.name).catch(() => null);
          const texts = (rendered?.messages ?? []).flatMap((m) => {
            const content = (m as { content?: { type?: unknown; text?: unknown } }).content;
            return content?.type === 'text' && typeof content.text === 'string' ? [content.text] : [];
          });
          if (texts.length > 0) body += `\n\n${texts.join('\n\n')}`;
        }
        const content = connection.scrubber.redact(cutUtf8(body, PROMPT_CONTENT_MAX_BYTES));
        const name = `mcp.${config.serverId}.${normalizeRemoteToolName(declaration.name)}`;
        const version = sha256Hex(canonicalJson({ description, content })).slice(0, 16);
        if ((await skills.get(tenantId, name, version)) !== null) continue;
        await skills.create(tenantId, { name, version, description, requiredTools: [], content, trust: 'external_untrusted', source: 'mcp', createdAt: this.#deps.clock.now() });
      } catch {
        // A prompt that cannot be recorded (a concurrent writer, a malformed declaration) costs
        // that prompt only; tools are unaffected.
      }
    }
  }

  // ---------------------------------------------------------------------------------------
  // Calls

  async #execute(route: ToolRoute, args: Record<string, unknown>, ctx: ToolExecutionContext): Promise<ToolResultInput> {
    if (this.#shutDown) throw new ToolUnavailableError('tool.server_unreachable', 'The MCP adapter is shut down.');
    const session = this.#session(ctx.tenantId, ctx.sessionId);
    session.lastActivity = Date.now();
    session.busy++;
    try {
      return await this.#executeIn(session, route, args, ctx);
    } finally {
      session.busy--;
      session.lastActivity = Date.now();
    }
  }

  async #executeIn(session: SessionState, route: ToolRoute, args: Record<string, unknown>, ctx: ToolExecutionContext): Promise<ToolResultInput> {
    const server = await this.#serverForCall(session, route);
    if (server.terminal !== null) {
      // Every later call to that server in this session: the same outcome, without dialling.
      throw new ToolUnavailableError(server.terminal, 'The server is unavailable for the rest of this session.', { dispatched: false });
    }
    const connection = await this.#ensureConnection(session, server);
    // § Run teardown: "compares discovery with the original pin: added tools stay unadvertised,
    // and removed or changed declarations return tool.withdrawn."
    if (server.liveHash !== route.spec.version && server.liveSpecs?.get(route.spec.name) !== route.identity) {
      throw new ToolUnavailableError('tool.withdrawn', 'The server no longer offers this declaration.', { dispatched: false });
    }
    // The executor's one number (§ MCP: min(request_timeout, spec.timeout_seconds, remaining run
    // budget), the request timeout declared with the registration): never a second limit of
    // our own (docs/adr/0025). The call's hard output ceiling reaches the transport too.
    const timeoutMs = Math.max(1, ctx.timeoutSeconds * 1000);
    const ceilingBytes = hardCaptureCeiling(ctx.maximumOutputBytes);
    const attempt =
      route.kind === 'read_resource'
        ? (c: McpConnection) => readResourceTool(c, args, timeoutMs, ctx, ceilingBytes)
        : async (c: McpConnection) => mapCallResult(await c.callTool(route.remoteName, args, timeoutMs, ctx.cancellation, ctx.deadlineAt.getTime(), ceilingBytes), route.spec, c.scrubber, ctx.maximumOutputBytes);
    try {
      return await attempt(connection);
    } catch (error) {
      if (ctx.cancellation.aborted) throw ctx.cancellation.reason ?? error;
      if (isUnauthorized(error)) return this.#ladder(session, server, connection, route, ctx, attempt);
      if (error instanceof McpAuthError) {
        // The token exchange at use was rejected (invalid_client): the credential is revoked,
        // and re-presenting it would only be another failed authentication. Nothing was sent.
        server.terminal = 'tool.server_unauthorized';
        await this.#closeConnection(session, server, 'tool.server_unauthorized');
        throw new ToolUnavailableError('tool.server_unauthorized', 'The credential was rejected when it was renewed.', { dispatched: false, cause: error });
      }
      return mapCallError(error, route.spec, connection.scrubber, ctx.maximumOutputBytes);
    }
  }

  /**
   * § A 401 mid-session runs a bounded ladder: the call is held; one re-authentication (at most
   * once per server per session); a byte-identical value stops the ladder; otherwise one retry,
   * only where the recovery table permits re-execution — a side-effecting call that is neither
   * READ_ONLY nor IDEMPOTENT had its watermark set before it was sent, so it is UNCERTAIN
   * instead; the next failure makes the server unavailable (tool.server_unauthorized) for the
   * rest of the session.
   */
  async #ladder(session: SessionState, server: ServerSession, connection: McpConnection, route: ToolRoute, ctx: ToolExecutionContext, attempt: (c: McpConnection) => Promise<ToolResultInput>): Promise<ToolResultInput> {
    if (server.ladder !== null && server.ladderSettled) {
      // A second 401 after the one re-authentication: a failing server, not an expired credential.
      return this.#becomeUnauthorized(session, server, route);
    }
    if (server.ladder === null) {
      const scope: EventScope = { sessionId: session.sessionId, serverId: server.config.serverId, at: this.#deps.clock.now() };
      server.ladder = connection.reauthenticate().then((outcome) => {
        server.ladderSettled = true;
        this.#emit(session.tenantId, [mcpEvents.reauthenticated(scope, server.config.authScheme, outcome)]);
        return outcome;
      });
    }
    const outcome = await server.ladder;
    if (outcome !== 'renewed') return this.#becomeUnauthorized(session, server, route);
    const retryPermitted = decideRecovery(route.spec.idempotency, route.spec.side_effect !== 'none' ? ctx.deadlineAt : null) === 're_execute';
    if (!retryPermitted) return outcomeUnknown('The server rejected the credential after a side-effecting call was sent; it was not retried.', null);
    try {
      return await attempt(connection);
    } catch (error) {
      if (ctx.cancellation.aborted) throw ctx.cancellation.reason ?? error;
      if (isUnauthorized(error)) return this.#becomeUnauthorized(session, server, route);
      return mapCallError(error, route.spec, connection.scrubber, ctx.maximumOutputBytes);
    }
  }

  async #becomeUnauthorized(session: SessionState, server: ServerSession, route: ToolRoute): Promise<ToolResultInput> {
    server.terminal = 'tool.server_unauthorized';
    await this.#closeConnection(session, server, 'tool.server_unauthorized');
    if (outcomeIsUncertainOnError(route.spec)) return outcomeUnknown('The server rejected the credential after a side-effecting call was sent.', null);
    throw new ToolUnavailableError('tool.server_unauthorized', 'The server rejected the credential; re-authentication did not help.', { dispatched: true });
  }

  async #serverForCall(session: SessionState, route: ToolRoute): Promise<ServerSession> {
    const known = session.servers.get(route.serverId);
    if (known !== undefined) {
      known.pinnedHash ??= route.spec.version;
      return known;
    }
    // A session this process did not prepare (another worker's, or one pruned): its pin is the
    // version the call names; the configuration is read again.
    const config = (await this.#deps.servers.list(session.tenantId)).find((c) => c.serverId === route.serverId && c.enabled);
    if (config === undefined) throw new ToolUnavailableError('tool.withdrawn', 'The server is no longer configured.', { dispatched: false });
    const server = new ServerSession(config);
    server.pinnedHash = route.spec.version;
    session.servers.set(route.serverId, server);
    return server;
  }

  /** The session's live connection, or a reconnection: freshly resolved credentials, discovery compared with the pin. */
  #ensureConnection(session: SessionState, server: ServerSession): Promise<McpConnection> {
    const current = server.connection;
    if (current !== null && !current.closed) return Promise.resolve(current);
    server.connecting ??= (async () => {
      server.handshakes++;
      const handshake = server.handshakes;
      const started = Date.now();
      const key = this.#memoryKey(session.tenantId, server.config);
      let connection: McpConnection | null = null;
      try {
        connection = await this.#open(session, server);
        const raw = await this.#discoverRaw(connection, false);
        const mapped = this.#map(server.config, raw);
        server.connection = connection;
        this.#setLive(server, mapped);
        // Every handshake replaces the remembered discovery of that server (ADR-0131).
        this.#memory.set(key, { raw, at: Date.now() });
        this.#emit(session.tenantId, [mcpEvents.connected(this.#scope(session, server), handshake, server.config.transport, mapped.routes.length, Date.now() - started)]);
        this.#ensureSweep();
        return connection;
      } catch (error) {
        await connection?.close();
        this.#memory.delete(key);
        const reasonCode = connectReasonCode(error);
        countConnectFailure(this.#deps.metrics, server.config.serverId, reasonCode);
        this.#emit(session.tenantId, [mcpEvents.disconnected(this.#scope(session, server), handshake, reasonCode)]);
        if (TERMINAL_AT_CONNECT.has(reasonCode)) server.terminal = reasonCode as TerminalCode;
        const code: UnavailableReasonCode = TERMINAL_AT_CONNECT.has(reasonCode) ? (reasonCode as UnavailableReasonCode) : 'tool.server_unreachable';
        throw new ToolUnavailableError(code, `The server could not be connected (${reasonCode}).`, { dispatched: false, cause: error });
      } finally {
        server.connecting = null;
      }
    })();
    return server.connecting;
  }

  // ---------------------------------------------------------------------------------------
  // Connection lifecycle

  /** notifications/tools/list_changed: recorded (mcp.catalog.changed), never applied to the pin. */
  #onListChanged(session: SessionState, server: ServerSession): void {
    if (server.pinnedHash === null || server.relisting) {
      server.relistAgain = server.pinnedHash !== null;
      return;
    }
    server.relisting = true;
    const work = (async () => {
      do {
        server.relistAgain = false;
        const connection = server.connection;
        if (connection === null || connection.closed) return;
        const hash = readRemoteCatalog(await connection.listTools()).catalogHash;
        const pinned = server.pinnedHash;
        if (pinned !== null && hash !== pinned && hash !== server.lastReportedHash) {
          server.lastReportedHash = hash;
          await this.#deps.events.append(session.tenantId, [mcpEvents.catalogChanged(this.#scope(session, server), pinned, hash)]);
        }
      } while (server.relistAgain);
    })()
      .catch(() => undefined)
      .finally(() => {
        server.relisting = false;
      });
    this.#track(this.#background, work);
  }

  /** A connection that closed on its own (a dropped server): the pin stays, the next call reconnects. */
  #onDropped(session: SessionState, server: ServerSession, reasonCode: string): void {
    server.connection = null;
    server.liveHash = null;
    server.liveSpecs = null;
    this.#emit(session.tenantId, [mcpEvents.disconnected(this.#scope(session, server), server.handshakes, reasonCode)]);
  }

  async #closeConnection(session: SessionState, server: ServerSession, reasonCode: string): Promise<void> {
    const connection = server.connection;
    server.connection = null;
    server.liveHash = null;
    server.liveSpecs = null;
    if (connection === null || connection.closed) return;
    await connection.close({ terminate: reasonCode !== 'tool.server_unauthorized' });
    this.#emit(session.tenantId, [mcpEvents.disconnected(this.#scope(session, server), server.handshakes, reasonCode)]);
  }

  #ensureSweep(): void {
    if (this.#sweep !== null || this.#sweeping || this.#shutDown) return;
    let interval = Math.min(SWEEP_MAX_INTERVAL_MS, Math.max(0, this.#settings.sweepIntervalSeconds) * 1000);
    for (const session of this.#sessions.values()) {
      for (const server of session.servers.values()) {
        if (server.connection !== null && !server.connection.closed) interval = Math.min(interval, server.connection.timeouts.idleMs);
      }
    }
    this.#sweep = setTimeout(() => {
      this.#sweep = null;
      this.#track(this.#background, this.#runSweep());
    }, Math.max(10, interval));
    this.#sweep.unref();
  }

  /**
   * § "Each API and worker process checks its own connections at most every thirty seconds …
   * The same sweep observes durable session closure or deletion by another process and discards
   * that session's local registrations." One pass: idle connections close; then, when the
   * sessions' store is composed, one read of every held session's durable state (docs/adr/0024):
   * a session closed or deleted elsewhere is discarded here (its transports closed, its pins and
   * ladder forgotten); an open one whose runs all ended or suspended has its unused transports
   * released (run teardown observed from another process — a cancellation through the api).
   * It keeps running while connections are live or, with the store, while sessions are held.
   */
  async #runSweep(): Promise<void> {
    this.#sweeping = true;
    try {
      const now = Date.now();
      for (const [sessionId, session] of this.#sessions) {
        let sessionLive = false;
        for (const server of session.servers.values()) {
          const connection = server.connection;
          if (connection === null || connection.closed) continue;
          if (connection.inflight === 0 && now - connection.lastUsedAt >= connection.timeouts.idleMs) {
            this.#track(this.#background, this.#closeConnection(session, server, 'mcp.idle_timeout'));
          } else {
            sessionLive = true;
          }
        }
        if (!sessionLive && session.busy === 0 && session.preparations === 0 && now - session.lastActivity > SESSION_RETENTION_MS) this.#sessions.delete(sessionId);
      }
      await this.#observeSessions();
    } finally {
      this.#sweeping = false;
    }
    if (this.#shutDown) return;
    const live = [...this.#sessions.values()].some((session) => [...session.servers.values()].some((server) => server.connection !== null && !server.connection.closed));
    if (live || (this.#deps.sessions !== undefined && this.#sessions.size > 0)) this.#ensureSweep();
  }

  async #observeSessions(): Promise<void> {
    const reader = this.#deps.sessions;
    if (reader === undefined || this.#sessions.size === 0) return;
    const held = [...this.#sessions.values()];
    const asked = Date.now();
    let answer: SessionLifecycle[];
    try {
      answer = await reader.lifecycle(held.map((s) => ({ tenantId: s.tenantId, sessionId: s.sessionId })));
    } catch {
      // The store is unreachable: nothing is concluded from silence; the next sweep asks again.
      return;
    }
    const found = new Map(answer.map((l) => [`${l.tenantId}\u0000${l.sessionId}`, l]));
    const work: Promise<void>[] = [];
    for (const session of held) {
      // Discarded or replaced while the store answered; or in use right now (a preparation, a
      // call): the next sweep looks again.
      if (this.#sessions.get(session.sessionId) !== session || session.preparations > 0 || session.busy > 0) continue;
      const state = found.get(`${session.tenantId}\u0000${session.sessionId}`);
      if (state === undefined) {
        // No row: deleted by another process — or a session whose open is still writing it
        // (preparation comes first), which is given UNCONFIRMED_GRACE_MS.
        if (session.confirmed || asked - session.createdAt >= UNCONFIRMED_GRACE_MS) work.push(this.#discard(session, 'mcp.session_deleted'));
        continue;
      }
      session.confirmed = true;
      if (state.status !== 'open') {
        work.push(this.#discard(session, 'mcp.session_closed'));
      } else if (state.runs > 0 && state.workingRuns === 0) {
        // Every run of the session ended or suspended: run teardown, seen from this process.
        // A transport used since the read began, or in flight, is left to the next sweep.
        for (const server of session.servers.values()) {
          const connection = server.connection;
          if (connection === null || connection.closed || connection.inflight > 0 || connection.lastUsedAt >= asked || server.connecting !== null) continue;
          work.push(this.#closeConnection(session, server, 'mcp.session_released'));
        }
      }
    }
    await Promise.allSettled(work);
  }

  /** A session closed or deleted: its transports close and everything this process knew of it goes. */
  async #discard(session: SessionState, reasonCode: string): Promise<void> {
    if (this.#sessions.get(session.sessionId) === session) this.#sessions.delete(session.sessionId);
    await Promise.allSettled([...session.servers.values()].map((server) => this.#closeConnection(session, server, reasonCode)));
  }

  /** § Run teardown releases its session's transports promptly; the pin and the ladder stay. */
  async releaseSession(sessionId: string): Promise<void> {
    const session = this.#sessions.get(sessionId);
    if (session === undefined) return;
    await Promise.all([...session.servers.values()].map((server) => this.#closeConnection(session, server, 'mcp.session_released')));
  }

  /** Orderly shutdown: in-progress preparation drains (for at most one connect-timeout window), then every transport closes. */
  async shutdown(): Promise<void> {
    if (this.#shutDown) return;
    this.#shutDown = true;
    this.#stopping.abort(new McpAdapterError('mcp.shut_down', 'The MCP adapter is shutting down.'));
    if (this.#sweep !== null) clearTimeout(this.#sweep);
    this.#sweep = null;
    const window = this.#maxConnectMs();
    await settleWithin([...this.#preparations], window);
    const closes: Promise<void>[] = [];
    for (const session of this.#sessions.values()) {
      for (const server of session.servers.values()) {
        if (server.connecting !== null) closes.push(server.connecting.then(() => undefined, () => undefined));
        closes.push(this.#closeConnection(session, server, 'mcp.shutdown'));
      }
    }
    await Promise.allSettled(closes);
    // Connections that finished connecting while we waited.
    const late: Promise<void>[] = [];
    for (const session of this.#sessions.values()) for (const server of session.servers.values()) late.push(this.#closeConnection(session, server, 'mcp.shutdown'));
    for (const connection of this.#warmupConnections) late.push(connection.close());
    await Promise.allSettled(late);
    await settleWithin([...this.#background], window);
  }

  // ---------------------------------------------------------------------------------------
  // Warm-up

  /**
   * ADR-0131's warm-up of the operator's servers (the directory's `operator()`), which every
   * tenant's session may then pin without a handshake (the memory key of an operator server
   * names no tenant; docs/adr/0024). Connect, discover, close, remember — and record nothing:
   * no catalog rows, no events, no skills (the connect-failure metric still counts each attempt).
   * One server at a time, each handshake allowed warmupConnectTimeoutSeconds; failed servers are
   * retried every warmupRetrySeconds, for at most warmupAttempts rounds in all. Tenant servers
   * are never warmed: there is no tenant at start, and their memory is each tenant's own.
   * Ends early, quietly, at shutdown. Resolves with what it did.
   */
  async warmUp(): Promise<WarmUpReport> {
    const configs = (this.#deps.servers.operator?.() ?? []).filter((c) => c.enabled && c.origin === 'operator');
    const report = { warmed: [] as string[], failed: [] as string[], rounds: 0 };
    if (this.#shutDown) return report;
    let pending = [...configs];
    const signal = this.#stopping.signal;
    for (let round = 0; round < this.#settings.warmupAttempts && pending.length > 0 && !signal.aborted; round++) {
      if (round > 0 && !(await sleep(this.#settings.warmupRetrySeconds * 1000, signal))) break;
      report.rounds = round + 1;
      const failed: ConfiguredServer[] = [];
      for (const config of pending) {
        if (signal.aborted) break;
        let connection: McpConnection | null = null;
        try {
          // No tenant: an operator server's credential resolves to env:/file: only (ADR 0017).
          connection = await McpConnection.open(config, this.#connectionDeps(WARMUP_TENANT, config), { connectTimeoutMs: this.#settings.warmupConnectTimeoutSeconds * 1000, signal });
          this.#warmupConnections.add(connection);
          const raw = await this.#discoverRaw(connection, false);
          this.#memory.set(this.#memoryKey(WARMUP_TENANT, config), { raw, at: Date.now() });
          report.warmed.push(config.serverId);
        } catch (error) {
          countConnectFailure(this.#deps.metrics, config.serverId, connectReasonCode(error));
          failed.push(config);
        } finally {
          if (connection !== null) {
            await connection.close();
            this.#warmupConnections.delete(connection);
          }
        }
      }
      pending = failed;
    }
    report.failed.push(...pending.map((c) => c.serverId));
    return report;
  }

  // ---------------------------------------------------------------------------------------
  // Helpers

  #session(tenantId: string, sessionId: string): SessionState {
    const existing = this.#sessions.get(sessionId);
    if (existing !== undefined) {
      if (existing.tenantId !== tenantId) throw new ToolUnavailableError('tool.server_unreachable', 'The session belongs to another tenant.');
      return existing;
    }
    const created = new SessionState(tenantId, sessionId, Date.now());
    this.#sessions.set(sessionId, created);
    if (this.#deps.sessions !== undefined) this.#ensureSweep();
    return created;
  }

  #scope(session: SessionState, server: ServerSession): EventScope {
    return { sessionId: session.sessionId, serverId: server.config.serverId, at: this.#deps.clock.now() };
  }

  /**
   * ADR-0131: "keyed by the whole configuration". An operator's server is the same server, with
   * the same operator credential, for every tenant: its discovery is one memory that every
   * tenant's session may pin (and that the start-up warm-up fills). A tenant's server is dialled
   * with that tenant's secret and is that tenant's business: its memory is the tenant's alone,
   * even when two tenants configure byte-identical rows (docs/adr/0024).
   */
  #memoryKey(tenantId: string, config: ConfiguredServer): string {
    return config.origin === 'operator' ? `operator\u0000${canonicalJson(config)}` : `tenant\u0000${tenantId}\u0000${canonicalJson(config)}`;
  }

  #maxConnectMs(): number {
    let max = 0;
    for (const session of this.#sessions.values()) for (const server of session.servers.values()) max = Math.max(max, effectiveTimeouts(server.config).connectMs);
    return max === 0 ? effectiveTimeouts({} as McpServerConfig).connectMs : max;
  }

  /** Events outside a preparation (calls, drops, the ladder): recorded, never allowed to fail the call. */
  #emit(tenantId: string, events: readonly NewEvent[]): void {
    this.#track(this.#background, this.#deps.events.append(tenantId, events).catch(() => undefined));
  }

  #track<T>(set: Set<Promise<unknown>>, work: Promise<T>): Promise<T> {
    set.add(work);
    const forget = () => set.delete(work);
    work.then(forget, forget);
    return work;
  }
}

function settleWithin(work: readonly Promise<unknown>[], ms: number): Promise<void> {
  if (work.length === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void Promise.allSettled(work).then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
