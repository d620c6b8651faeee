import { ToolUnavailableError } from '@veetbot/domain';
import type { SessionLifecycle } from '@veetbot/ports';
import { effectiveTimeouts, type McpServerConfig } from '../config/server-config';
import type { AdapterState } from './adapter-state';
import type { ServerConnections } from './server-connections';
import { SessionState } from './session-state';

const SWEEP_MAX_INTERVAL_MS = 30_000;
const SESSION_RETENTION_MS = 24 * 60 * 60 * 1000;
/**
 * A session this process prepared whose row the sweep has not yet seen: its open may still be
 * writing the row (the runtime prepares before it creates the session). Without a row after
 * this long, the open failed and its transports are let go.
 */
const UNCONFIRMED_GRACE_MS = 60_000;

/**
 * The sessions this process holds, keyed by id (an execute finds its session through the
 * context, never through a closure), and the sweep that lets them go: idle connections, and
 * sessions closed, deleted or torn down by another process (docs/adr/0024).
 */
export class HeldSessions {
  readonly #state: AdapterState;
  readonly #connections: ServerConnections;
  readonly #sessions = new Map<string, SessionState>();
  #sweep: ReturnType<typeof setTimeout> | null = null;
  #sweeping = false;

  constructor(state: AdapterState, connections: ServerConnections) {
    this.#state = state;
    this.#connections = connections;
  }

  /** The session's state in this process, created on first use; a session id is one tenant's. */
  of(tenantId: string, sessionId: string): SessionState {
    const existing = this.#sessions.get(sessionId);
    if (existing !== undefined) {
      if (existing.tenantId !== tenantId)
        throw new ToolUnavailableError('tool.server_unreachable', 'The session belongs to another tenant.');
      return existing;
    }
    const created = new SessionState(tenantId, sessionId, Date.now());
    this.#sessions.set(sessionId, created);
    if (this.#state.deps.sessions !== undefined) this.ensureSweep();
    return created;
  }

  all(): IterableIterator<SessionState> {
    return this.#sessions.values();
  }

  ensureSweep(): void {
    if (this.#sweep !== null || this.#sweeping || this.#state.shutDown) return;
    let interval = Math.min(SWEEP_MAX_INTERVAL_MS, Math.max(0, this.#state.settings.sweepIntervalSeconds) * 1000);
    for (const session of this.#sessions.values()) {
      for (const server of session.servers.values()) {
        if (server.connection !== null && !server.connection.closed) interval = Math.min(interval, server.connection.timeouts.idleMs);
      }
    }
    this.#sweep = setTimeout(
      () => {
        this.#sweep = null;
        this.#state.track(this.#state.background, this.#runSweep());
      },
      Math.max(10, interval),
    );
    this.#sweep.unref();
  }

  stopSweep(): void {
    if (this.#sweep !== null) clearTimeout(this.#sweep);
    this.#sweep = null;
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
            this.#state.track(this.#state.background, this.#connections.close(session, server, 'mcp.idle_timeout'));
          } else {
            sessionLive = true;
          }
        }
        if (!sessionLive && session.busy === 0 && session.preparations === 0 && now - session.lastActivity > SESSION_RETENTION_MS)
          this.#sessions.delete(sessionId);
      }
      await this.#observeSessions();
    } finally {
      this.#sweeping = false;
    }
    if (this.#state.shutDown) return;
    const live = [...this.#sessions.values()].some((session) =>
      [...session.servers.values()].some((server) => server.connection !== null && !server.connection.closed),
    );
    if (live || (this.#state.deps.sessions !== undefined && this.#sessions.size > 0)) this.ensureSweep();
  }

  async #observeSessions(): Promise<void> {
    const reader = this.#state.deps.sessions;
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
        if (session.confirmed || asked - session.createdAt >= UNCONFIRMED_GRACE_MS)
          work.push(this.#discard(session, 'mcp.session_deleted'));
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
          if (
            connection === null ||
            connection.closed ||
            connection.inflight > 0 ||
            connection.lastUsedAt >= asked ||
            server.connecting !== null
          )
            continue;
          work.push(this.#connections.close(session, server, 'mcp.session_released'));
        }
      }
    }
    await Promise.allSettled(work);
  }

  /** A session closed or deleted: its transports close and everything this process knew of it goes. */
  async #discard(session: SessionState, reasonCode: string): Promise<void> {
    if (this.#sessions.get(session.sessionId) === session) this.#sessions.delete(session.sessionId);
    await Promise.allSettled([...session.servers.values()].map((server) => this.#connections.close(session, server, reasonCode)));
  }

  /** § Run teardown releases its session's transports promptly; the pin and the ladder stay. */
  async release(sessionId: string): Promise<void> {
    const session = this.#sessions.get(sessionId);
    if (session === undefined) return;
    await Promise.all([...session.servers.values()].map((server) => this.#connections.close(session, server, 'mcp.session_released')));
  }

  /** The longest connect timeout among the held servers: how long shutdown lets preparation drain. */
  maxConnectMs(): number {
    let max = 0;
    for (const session of this.#sessions.values())
      for (const server of session.servers.values()) max = Math.max(max, effectiveTimeouts(server.config).connectMs);
    return max === 0 ? effectiveTimeouts({} as McpServerConfig).connectMs : max;
  }
}
