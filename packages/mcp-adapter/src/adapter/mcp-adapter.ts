import type {
  DynamicTool,
  McpClientPort,
  McpSessionPreparationResult,
  McpSessionRequest,
  Reconcilers,
  RegistrationReport,
} from '@veetbot/ports';
import { McpAdapterError } from '../errors';
import type { McpAdapterDeps } from './adapter-settings';
import { AdapterState } from './adapter-state';
import { CatalogPreparation, type WarmUpReport } from './catalog-preparation';
import { HeldSessions } from './held-sessions';
import { lookupReconcilers } from './lookup-connections';
import { ServerConnections } from './server-connections';
import { ToolCalls } from './tool-calls';

export { DEFAULT_ADAPTER_SETTINGS, type McpAdapterDeps, type McpAdapterSettings } from './adapter-settings';
export type { WarmUpReport } from './catalog-preparation';

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
 *
 * The parts (docs/adr/0032): the sessions this process holds and their sweep (HeldSessions),
 * each server's connection (ServerConnections), the catalog at session open and the warm-up
 * (CatalogPreparation), the calls (ToolCalls), over the state they share (AdapterState).
 */
export class McpAdapter implements McpClientPort {
  readonly #state: AdapterState;
  readonly #connections: ServerConnections;
  readonly #sessions: HeldSessions;
  readonly #catalog: CatalogPreparation;

  constructor(deps: McpAdapterDeps) {
    this.#state = new AdapterState(deps);
    const connections = new ServerConnections(this.#state);
    this.#sessions = new HeldSessions(this.#state, connections);
    const calls = new ToolCalls(this.#state, connections, this.#sessions);
    this.#catalog = new CatalogPreparation(this.#state, connections, this.#sessions, calls);
    this.#connections = connections;
  }

  prepareSession(
    request: McpSessionRequest,
    register: (tools: readonly DynamicTool[]) => Promise<RegistrationReport>,
  ): Promise<McpSessionPreparationResult> {
    if (this.#state.shutDown) return Promise.reject(new McpAdapterError('mcp.shut_down', 'The MCP adapter is shut down.'));
    return this.#state.track(this.#state.preparations, this.#catalog.prepare(request, register));
  }

  /** § Run teardown releases its session's transports promptly; the pin and the ladder stay. */
  releaseSession(sessionId: string): Promise<void> {
    return this.#sessions.release(sessionId);
  }

  /** docs/adr/0066: reconcilers for the operator servers whose classification names a lookup tool. */
  lookupReconcilers(): Reconcilers {
    return lookupReconcilers(this.#state, this.#connections);
  }

  /** ADR-0131's warm-up of the operator's servers (CatalogPreparation.warmUp). */
  warmUp(): Promise<WarmUpReport> {
    return this.#catalog.warmUp();
  }

  /** Orderly shutdown: in-progress preparation drains (for at most one connect-timeout window), then every transport closes. */
  async shutdown(): Promise<void> {
    const state = this.#state;
    if (state.shutDown) return;
    state.shutDown = true;
    state.stopping.abort(new McpAdapterError('mcp.shut_down', 'The MCP adapter is shutting down.'));
    this.#sessions.stopSweep();
    const window = this.#sessions.maxConnectMs();
    await settleWithin([...state.preparations], window);
    const closes: Promise<void>[] = [];
    for (const session of this.#sessions.all()) {
      for (const server of session.servers.values()) {
        if (server.connecting !== null)
          closes.push(
            server.connecting.then(
              () => undefined,
              () => undefined,
            ),
          );
        closes.push(this.#connections.close(session, server, 'mcp.shutdown'));
      }
    }
    await Promise.allSettled(closes);
    // Connections that finished connecting while we waited.
    const late: Promise<void>[] = [];
    for (const session of this.#sessions.all())
      for (const server of session.servers.values()) late.push(this.#connections.close(session, server, 'mcp.shutdown'));
    for (const connection of this.#catalog.warmupConnections) late.push(connection.close());
    await Promise.allSettled(late);
    await settleWithin([...state.background], window);
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
