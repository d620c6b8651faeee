import type {
  DynamicTool,
  McpCatalogGeneration,
  McpServerPreparation,
  McpSessionPreparationResult,
  McpSessionRequest,
  NewEvent,
  RegistrationReport,
} from '@veetbot/ports';
import { callLimits, type McpServerConfig } from '../config/server-config';
import type { ConfiguredServer } from '../config/server-directory';
import { connectFailureDetail, connectReasonCode, McpConnection } from '../connection/mcp-connection';
import { McpAdapterError } from '../errors';
import { countConnectFailure } from '../telemetry';
import type { AdapterState } from './adapter-state';
import { discoverRaw, mapDiscovery, setLive, type RawDiscovery, type ToolRoute } from './discovery';
import type { HeldSessions } from './held-sessions';
import { mcpEvents, type EventScope } from './mcp-events';
import { recordPromptSkills } from './prompt-skills';
import type { ServerConnections } from './server-connections';
import { ServerSession, TERMINAL_AT_CONNECT, type SessionState, type TerminalCode } from './session-state';
import type { ToolCalls } from './tool-calls';

type DiscoveryOutcome =
  | { readonly kind: 'live'; readonly connection: McpConnection; readonly raw: RawDiscovery; readonly durationMs: number }
  | { readonly kind: 'remembered'; readonly raw: RawDiscovery }
  | { readonly kind: 'failed'; readonly reasonCode: string; readonly detail: string | null };

/** The tenant an operator server's warm-up resolves credentials for: none (the broker gives an operator server env:/file: only). */
const WARMUP_TENANT = '';

type Register = (tools: readonly DynamicTool[]) => Promise<RegistrationReport>;

/** What a warm-up did: servers remembered, servers still failing after the last round, rounds run. */
export interface WarmUpReport {
  readonly warmed: readonly string[];
  readonly failed: readonly string[];
  readonly rounds: number;
}

/**
 * The catalog at session open: connect, initialize, tools/list, map, register, record (catalog
 * generations, mcp.* events) in configured-server order — or pin the last live discovery
 * (ADR-0131); and the start-up warm-up that fills that memory for the operator's servers.
 */
export class CatalogPreparation {
  readonly #state: AdapterState;
  readonly #connections: ServerConnections;
  readonly #sessions: HeldSessions;
  readonly #calls: ToolCalls;
  /** Catalog generations this process already wrote (the table is a history). */
  readonly #written = new Set<string>();
  /** Connections a warm-up holds right now: shutdown closes them. */
  readonly warmupConnections = new Set<McpConnection>();

  constructor(state: AdapterState, connections: ServerConnections, sessions: HeldSessions, calls: ToolCalls) {
    this.#state = state;
    this.#connections = connections;
    this.#sessions = sessions;
    this.#calls = calls;
  }

  async prepare(request: McpSessionRequest, register: Register): Promise<McpSessionPreparationResult> {
    const { tenantId, sessionId } = request;
    const wanted = request.serverIds;
    const configs = (await this.#state.deps.servers.list(tenantId)).filter(
      (c) => c.enabled && (wanted === undefined || wanted.includes(c.serverId)),
    );
    const session = this.#sessions.of(tenantId, sessionId);
    // One preparation of a session at a time: a server is marked tried only once its discovery
    // ends, so a concurrent second preparation would otherwise connect to it again. Other
    // sessions do not wait on this lock.
    session.preparations++;
    try {
      const release = await session.preparing.acquire();
      try {
        if (this.#state.shutDown) throw new McpAdapterError('mcp.shut_down', 'The MCP adapter is shut down.');
        return await this.#prepareLocked(session, configs, wanted !== undefined, register);
      } finally {
        release();
      }
    } finally {
      session.preparations--;
      session.lastActivity = Date.now();
    }
  }

  async #prepareLocked(
    session: SessionState,
    configs: readonly ConfiguredServer[],
    forceLive: boolean,
    register: Register,
  ): Promise<McpSessionPreparationResult> {
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
      const scope: EventScope = { sessionId, serverId: config.serverId, at: this.#state.deps.clock.now() };
      if (outcome.kind === 'failed') {
        // § A 401 at connect is terminal for the session: no tools, never retried here.
        if (TERMINAL_AT_CONNECT.has(outcome.reasonCode)) server.terminal = outcome.reasonCode as TerminalCode;
        server.preparation = {
          serverId: config.serverId,
          transport: config.transport,
          status: 'failed',
          reasonCode: outcome.reasonCode,
          ...(outcome.detail === null ? {} : { detail: outcome.detail }),
          catalogHash: null,
          toolCount: 0,
        };
        events.push(mcpEvents.disconnected(scope, server.handshakes, outcome.reasonCode));
        return;
      }
      const mapped = mapDiscovery(config, outcome.raw, this.#state.deps.validator);
      server.pinnedHash = mapped.catalogHash;
      server.relistAgain = false;
      if (outcome.kind === 'live') {
        server.connection = outcome.connection;
        setLive(server, mapped);
        events.push(mcpEvents.connected(scope, server.handshakes, config.transport, mapped.routes.length, outcome.durationMs));
        if (outcome.raw.prompts !== null) prompts.push({ server, connection: outcome.connection, prompts: outcome.raw.prompts });
      } else {
        events.push(mcpEvents.pinned(scope, mapped.catalogHash, config.transport, mapped.routes.length));
      }
      for (const r of mapped.mapping.rejected) events.push(mcpEvents.toolRejected(scope, mapped.catalogHash, r.remoteName, r.reason));
      for (const c of mapped.mapping.conflicts)
        events.push(mcpEvents.catalogConflict(scope, mapped.catalogHash, c.registryName, c.remoteNames));
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
        ...(outcome.kind === 'live' && outcome.connection.protocolVersion !== undefined
          ? { protocolVersion: outcome.connection.protocolVersion }
          : {}),
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
        await this.#state.deps.catalog.recordPreparation(tenantId, unwritten, events);
      } catch (error) {
        await this.#forgetPreparation(fresh);
        throw error;
      }
    }
    for (const generation of unwritten) this.#written.add(writtenKey(generation));
    const skills = this.#state.deps.skills;
    if (skills !== undefined) {
      const now = () => this.#state.deps.clock.now();
      for (const p of prompts) await recordPromptSkills(skills, now, tenantId, p.server.config, p.connection, p.prompts);
    }
    if (outcomes.some((o) => o.kind === 'live') || this.#state.deps.sessions !== undefined) this.#sessions.ensureSweep();

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
    const key = this.#state.memoryKey(session.tenantId, config);
    if (!forceLive) {
      const remembered = this.#state.memory.get(key);
      const fresh =
        remembered !== undefined &&
        (config.transport === 'stdio' || Date.now() - remembered.at <= this.#state.settings.discoveryReuseSeconds * 1000);
      if (fresh) return { kind: 'remembered', raw: remembered.raw };
    }
    // A stdio startup takes its process slot before a general slot; capacity waiting comes
    // before the connect timeout starts (ADR-0131).
    let releaseStartup: (() => void) | null = config.transport === 'stdio' ? await this.#state.stdioSlots.acquire() : null;
    const release = await this.#state.slots.acquire();
    let connection: McpConnection | null = null;
    try {
      const started = Date.now();
      server.handshakes++;
      connection = await this.#connections.open(session, server);
      releaseStartup?.();
      releaseStartup = null;
      const raw = await discoverRaw(connection, this.#state.deps.skills !== undefined);
      this.#state.memory.set(key, { raw, at: Date.now() });
      return { kind: 'live', connection, raw, durationMs: Date.now() - started };
    } catch (error) {
      await connection?.close();
      // A failed handshake forgets the remembered discovery (ADR-0131).
      this.#state.memory.delete(key);
      const reasonCode = connectReasonCode(error);
      countConnectFailure(this.#state.deps.metrics, config.serverId, reasonCode);
      return { kind: 'failed', reasonCode, detail: connectFailureDetail(error) };
    } finally {
      releaseStartup?.();
      release();
    }
  }

  #dynamicTool(route: ToolRoute, config: McpServerConfig): DynamicTool {
    // The server's request timeout reaches the executor with the registration: it computes the
    // one effective timeout (docs/adr/0025).
    return { spec: route.spec, limits: callLimits(config), execute: (args, context) => this.#calls.execute(route, args, context) };
  }

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
    const configs = (this.#state.deps.servers.operator?.() ?? []).filter((c) => c.enabled && c.origin === 'operator');
    const report = { warmed: [] as string[], failed: [] as string[], rounds: 0 };
    if (this.#state.shutDown) return report;
    let pending = [...configs];
    const signal = this.#state.stopping.signal;
    for (let round = 0; round < this.#state.settings.warmupAttempts && pending.length > 0 && !signal.aborted; round++) {
      if (round > 0 && !(await sleep(this.#state.settings.warmupRetrySeconds * 1000, signal))) break;
      report.rounds = round + 1;
      const failed: ConfiguredServer[] = [];
      for (const config of pending) {
        if (signal.aborted) break;
        let connection: McpConnection | null = null;
        try {
          // No tenant: an operator server's credential resolves to env:/file: only (ADR 0017).
          connection = await McpConnection.open(config, this.#connections.depsFor(WARMUP_TENANT, config), {
            connectTimeoutMs: this.#state.settings.warmupConnectTimeoutSeconds * 1000,
            signal,
          });
          this.warmupConnections.add(connection);
          const raw = await discoverRaw(connection, false);
          this.#state.memory.set(this.#state.memoryKey(WARMUP_TENANT, config), { raw, at: Date.now() });
          report.warmed.push(config.serverId);
        } catch (error) {
          countConnectFailure(this.#state.deps.metrics, config.serverId, connectReasonCode(error));
          failed.push(config);
        } finally {
          if (connection !== null) {
            await connection.close();
            this.warmupConnections.delete(connection);
          }
        }
      }
      pending = failed;
    }
    report.failed.push(...pending.map((c) => c.serverId));
    return report;
  }
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
