import type { McpServerPreparation } from '@veetbot/ports';
import type { ConfiguredServer } from '../config/server-directory';
import type { McpConnection } from '../connection/mcp-connection';
import type { ReauthenticationOutcome } from '../auth/credential-state';
import { Semaphore } from './semaphore';

/** Unavailability that lasts for the rest of the session (§ "Reconnection does not reset a terminal unavailability decision"). */
export type TerminalCode = 'tool.server_unauthorized' | 'tool.auth_failed' | 'tool.auth_unsupported';
/** § A 401 at connect is terminal for the session: these connect outcomes make it so. */
export const TERMINAL_AT_CONNECT: ReadonlySet<string> = new Set(['tool.auth_failed', 'tool.auth_unsupported']);

/** One server as one session knows it: the pin, the live connection, the ladder. */
export class ServerSession {
  config: ConfiguredServer;
  /** Set once preparation tried this server; a later full preparation skips it. */
  preparation: McpServerPreparation | null = null;
  /** The catalog hash this session advertised for the server (the pin). */
  pinnedHash: string | null = null;
  connection: McpConnection | null = null;
  connecting: Promise<McpConnection> | null = null;
  /** What the live connection's discovery offers: registry name -> canonical spec (version blanked). */
  liveSpecs: Map<string, string> | null = null;
  liveHash: string | null = null;
  terminal: TerminalCode | null = null;
  /** § The ladder runs at most once per server per session. */
  ladder: Promise<ReauthenticationOutcome> | null = null;
  ladderSettled = false;
  /** Handshakes so far: the derivation key of each connected/disconnected event. */
  handshakes = 0;
  lastReportedHash: string | null = null;
  relisting = false;
  relistAgain = false;

  constructor(config: ConfiguredServer) {
    this.config = config;
  }
}

export class SessionState {
  readonly servers = new Map<string, ServerSession>();
  /**
   * One preparation of this session at a time (ADR-0131: preparation is recorded per server, so
   * a second concurrent one must see the first's servers as tried instead of discovering them
   * again). Other sessions' preparations are not held by it.
   */
  readonly preparing = new Semaphore(1);
  lastActivity: number;
  /** When this process first knew the session (wall time). */
  readonly createdAt: number;
  /** Preparations under way or waiting for the lock: the sweep leaves the session alone. */
  preparations = 0;
  /** Calls running through this session's state right now: the sweep leaves the session alone. */
  busy = 0;
  /** The sweep has seen the session's row (docs/adr/0024): a missing row now means deleted. */
  confirmed = false;

  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
    now: number,
  ) {
    this.lastActivity = now;
    this.createdAt = now;
  }
}
