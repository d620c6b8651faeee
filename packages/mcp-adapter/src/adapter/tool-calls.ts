import { hardCaptureCeiling, ToolUnavailableError, type ToolResultInput, type UnavailableReasonCode } from '@veetbot/domain';
import type { ToolExecutionContext } from '@veetbot/ports';
import { connectFailureDetail, connectReasonCode, isUnauthorized, type McpConnection } from '../connection/mcp-connection';
import { McpAuthError } from '../errors';
import { countConnectFailure } from '../telemetry';
import type { AdapterState } from './adapter-state';
import { mapCallError, mapCallResult, outcomeIsUncertainOnError, outcomeUnknown } from './call-results';
import { ladderMayRetry } from './ladder-recovery';
import { discoverRaw, mapDiscovery, setLive, type ToolRoute } from './discovery';
import { elicitationCall } from '../elicitation/elicitation-call';
import type { HeldSessions } from './held-sessions';
import { mcpEvents, type EventScope } from './mcp-events';
import { readResourceTool } from './read-resource';
import type { ServerConnections } from './server-connections';
import { ServerSession, TERMINAL_AT_CONNECT, type SessionState, type TerminalCode } from './session-state';

/**
 * A registered tool's execute: tools/call (or the synthetic resource read) over the session's
 * connection to the server, reconnecting when it dropped. Availability is resolved here, at
 * call time: unreachable, unauthorized (after the bounded ladder) and withdrawn are
 * ToolUnavailableError; the result of a call that went out is mapped under Decision 26.
 */
export class ToolCalls {
  readonly #state: AdapterState;
  readonly #connections: ServerConnections;
  readonly #sessions: HeldSessions;

  constructor(state: AdapterState, connections: ServerConnections, sessions: HeldSessions) {
    this.#state = state;
    this.#connections = connections;
    this.#sessions = sessions;
  }

  async execute(route: ToolRoute, args: Record<string, unknown>, ctx: ToolExecutionContext): Promise<ToolResultInput> {
    if (this.#state.shutDown) throw new ToolUnavailableError('tool.server_unreachable', 'The MCP adapter is shut down.');
    const session = this.#sessions.of(ctx.tenantId, ctx.sessionId);
    session.lastActivity = Date.now();
    session.busy++;
    try {
      return await this.#executeIn(session, route, args, ctx);
    } finally {
      session.busy--;
      session.lastActivity = Date.now();
    }
  }

  async #executeIn(
    session: SessionState,
    route: ToolRoute,
    args: Record<string, unknown>,
    ctx: ToolExecutionContext,
  ): Promise<ToolResultInput> {
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
        : async (c: McpConnection) =>
            mapCallResult(
              await c.callTool(
                route.remoteName,
                args,
                timeoutMs,
                ctx.cancellation,
                ctx.deadlineAt.getTime(),
                ceilingBytes,
                ctx.idempotencyKey,
                route.spec.input_schema,
                elicitationCall(ctx, route.spec.name, route.serverId),
              ),
              route.spec,
              c.scrubber,
              ctx.maximumOutputBytes,
            );
    try {
      return await attempt(connection);
    } catch (error) {
      if (ctx.cancellation.aborted) throw ctx.cancellation.reason ?? error;
      if (isUnauthorized(error)) return this.#ladder(session, server, connection, route, ctx, attempt);
      if (error instanceof McpAuthError) {
        // The token exchange at use was rejected (invalid_client): the credential is revoked,
        // and re-presenting it would only be another failed authentication. Nothing was sent.
        server.terminal = 'tool.server_unauthorized';
        await this.#connections.close(session, server, 'tool.server_unauthorized');
        throw new ToolUnavailableError('tool.server_unauthorized', 'The credential was rejected when it was renewed.', {
          dispatched: false,
          cause: error,
        });
      }
      return mapCallError(error, route.spec, connection.scrubber, ctx.maximumOutputBytes);
    }
  }

  /**
   * § A 401 mid-session runs a bounded ladder: the call is held; one re-authentication (at most
   * once per server per session); a byte-identical value stops the ladder; otherwise one retry,
   * only where the recovery table permits a retry (ladder-recovery.ts: re-execute, or replay
   * with the same key for CONDITIONALLY_IDEMPOTENT; a NON_IDEMPOTENT call whose watermark is set
   * is UNCERTAIN instead); the next failure makes the server unavailable
   * (tool.server_unauthorized) for the rest of the session.
   */
  async #ladder(
    session: SessionState,
    server: ServerSession,
    connection: McpConnection,
    route: ToolRoute,
    ctx: ToolExecutionContext,
    attempt: (c: McpConnection) => Promise<ToolResultInput>,
  ): Promise<ToolResultInput> {
    if (server.ladder !== null && server.ladderSettled) {
      // A second 401 after the one re-authentication: a failing server, not an expired credential.
      return this.#becomeUnauthorized(session, server, route);
    }
    if (server.ladder === null) {
      const scope: EventScope = { sessionId: session.sessionId, serverId: server.config.serverId, at: this.#state.deps.clock.now() };
      server.ladder = connection.reauthenticate().then((outcome) => {
        server.ladderSettled = true;
        this.#state.emit(session.tenantId, [mcpEvents.reauthenticated(scope, server.config.authScheme, outcome)]);
        return outcome;
      });
    }
    const outcome = await server.ladder;
    if (outcome !== 'renewed') return this.#becomeUnauthorized(session, server, route);
    if (!ladderMayRetry(route.spec))
      return outcomeUnknown('The server rejected the credential after a side-effecting call was sent; it was not retried.', null);
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
    await this.#connections.close(session, server, 'tool.server_unauthorized');
    if (outcomeIsUncertainOnError(route.spec))
      return outcomeUnknown('The server rejected the credential after a side-effecting call was sent.', null);
    throw new ToolUnavailableError('tool.server_unauthorized', 'The server rejected the credential; re-authentication did not help.', {
      dispatched: true,
    });
  }

  async #serverForCall(session: SessionState, route: ToolRoute): Promise<ServerSession> {
    const known = session.servers.get(route.serverId);
    if (known !== undefined) {
      known.pinnedHash ??= route.spec.version;
      return known;
    }
    // A session this process did not prepare (another worker's, or one pruned): its pin is the
    // version the call names; the configuration is read again.
    const config = (await this.#state.deps.servers.list(session.tenantId)).find((c) => c.serverId === route.serverId && c.enabled);
    if (config === undefined)
      throw new ToolUnavailableError('tool.withdrawn', 'The server is no longer configured.', { dispatched: false });
    const server = new ServerSession(config);
    server.pinnedHash = route.spec.version;
    session.servers.set(route.serverId, server);
    return server;
  }

  /** The session's live connection, or a reconnection: freshly resolved credentials, discovery compared with the pin. */
  #ensureConnection(session: SessionState, server: ServerSession): Promise<McpConnection> {
    const current = server.connection;
    if (current !== null && !current.closed) return Promise.resolve(current);
    const state = this.#state;
    server.connecting ??= (async () => {
      server.handshakes++;
      const handshake = server.handshakes;
      const started = Date.now();
      const key = state.memoryKey(session.tenantId, server.config);
      let connection: McpConnection | null = null;
      try {
        connection = await this.#connections.open(session, server);
        const raw = await discoverRaw(connection, false);
        const mapped = mapDiscovery(server.config, raw, state.deps.validator);
        server.connection = connection;
        setLive(server, mapped);
        // Every handshake replaces the remembered discovery of that server (ADR-0131).
        state.memory.set(key, { raw, at: Date.now() });
        state.emit(session.tenantId, [
          mcpEvents.connected(state.scope(session, server), handshake, server.config.transport, mapped.routes.length, Date.now() - started),
        ]);
        this.#sessions.ensureSweep();
        return connection;
      } catch (error) {
        await connection?.close();
        state.memory.delete(key);
        const reasonCode = connectReasonCode(error);
        countConnectFailure(state.deps.metrics, server.config.serverId, reasonCode);
        state.emit(session.tenantId, [mcpEvents.disconnected(state.scope(session, server), handshake, reasonCode)]);
        if (TERMINAL_AT_CONNECT.has(reasonCode)) server.terminal = reasonCode as TerminalCode;
        const code: UnavailableReasonCode = TERMINAL_AT_CONNECT.has(reasonCode)
          ? (reasonCode as UnavailableReasonCode)
          : 'tool.server_unreachable';
        // The row's detail names egress or DNS; the item keeps the code's fixed message (docs/adr/0056).
        const why = connectFailureDetail(error);
        throw new ToolUnavailableError(code, `The server could not be connected (${reasonCode}).${why === null ? '' : ` ${why}`}`, {
          dispatched: false,
          cause: error,
        });
      } finally {
        server.connecting = null;
      }
    })();
    return server.connecting;
  }
}
