import type { ConfiguredServer } from '../config/server-directory';
import { McpConnection, type ConnectionDeps } from '../connection/mcp-connection';
import { readRemoteCatalog } from '../mapping/remote-catalog';
import type { AdapterState } from './adapter-state';
import { offeredDeclarations } from './discovery';
import { mcpEvents } from './mcp-events';
import type { ServerSession, SessionState } from './session-state';

/**
 * One server's connection as a session holds it: opened with the tenant's credentials and the
 * server's egress policy, watched for notifications/tools/list_changed and for closing on its
 * own, closed with its disconnected event.
 */
export class ServerConnections {
  readonly #state: AdapterState;

  constructor(state: AdapterState) {
    this.#state = state;
  }

  open(session: SessionState, server: ServerSession, connectTimeoutMs?: number): Promise<McpConnection> {
    const holder: { connection: McpConnection | null } = { connection: null };
    const opened = McpConnection.open(server.config, this.depsFor(session.tenantId, server.config), {
      ...(connectTimeoutMs === undefined ? {} : { connectTimeoutMs }),
      signal: this.#state.stopping.signal,
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

  depsFor(tenantId: string, config: ConfiguredServer): ConnectionDeps {
    const { deps, settings } = this.#state;
    return {
      credentials: deps.credentials.forServer(tenantId, config.origin),
      egress: deps.egressFor?.(config) ?? deps.egress,
      now: () => deps.clock.now(),
      maxLineBytes: settings.maxLineBytes,
      stderrMaxBytes: settings.stderrMaxBytes,
      metrics: deps.metrics,
      elicitation: deps.elicitation === undefined ? undefined : { port: deps.elicitation, validator: deps.validator },
      delegated:
        deps.delegatedAuthorization === undefined
          ? undefined
          : {
              port: deps.delegatedAuthorization,
              owner: { tenantId, principalId: deps.delegatedAuthorization.principalFor?.(tenantId) ?? null, serverId: config.serverId },
            },
    };
  }

  async close(session: SessionState, server: ServerSession, reasonCode: string): Promise<void> {
    const connection = server.connection;
    server.connection = null;
    server.liveHash = null;
    server.liveSpecs = null;
    if (connection === null || connection.closed) return;
    await connection.close({ terminate: reasonCode !== 'tool.server_unauthorized' });
    this.#state.emit(session.tenantId, [mcpEvents.disconnected(this.#state.scope(session, server), server.handshakes, reasonCode)]);
  }

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
        const hash = readRemoteCatalog(offeredDeclarations(server.config, await connection.listTools())).catalogHash;
        const pinned = server.pinnedHash;
        if (pinned !== null && hash !== pinned && hash !== server.lastReportedHash) {
          server.lastReportedHash = hash;
          await this.#state.deps.events.append(session.tenantId, [
            mcpEvents.catalogChanged(this.#state.scope(session, server), pinned, hash),
          ]);
        }
      } while (server.relistAgain);
    })()
      .catch(() => undefined)
      .finally(() => {
        server.relisting = false;
      });
    this.#state.track(this.#state.background, work);
  }

  /** A connection that closed on its own (a dropped server): the pin stays, the next call reconnects. */
  #onDropped(session: SessionState, server: ServerSession, reasonCode: string): void {
    server.connection = null;
    server.liveHash = null;
    server.liveSpecs = null;
    this.#state.emit(session.tenantId, [mcpEvents.disconnected(this.#state.scope(session, server), server.handshakes, reasonCode)]);
  }
}
